import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * A migration that adds one column to one table, spelled for each dialect (`ALTER TABLE ... ADD
 * COLUMN` is additive: replicas of the previous release keep working while it rolls out).
 */
export abstract class AddColumn implements MigrationInterface {
  abstract readonly name: string;

  protected constructor(
    private readonly table: string,
    private readonly column: string,
    private readonly types: { readonly mysql: string; readonly sqlite: string },
  ) {}

  async up(queryRunner: QueryRunner): Promise<void> {
    const type = this.types[queryRunner.connection.options.type === "mysql" ? "mysql" : "sqlite"];
    await queryRunner.query(`ALTER TABLE ${this.table} ADD COLUMN ${this.column} ${type}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${this.table} DROP COLUMN ${this.column}`);
  }
}
