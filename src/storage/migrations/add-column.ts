import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * A migration that adds one column to one table, spelled for each dialect (`ALTER TABLE ... ADD
 * COLUMN` is additive: replicas of the previous release keep working while it rolls out).
 *
 * FROZEN: a migrations-only helper, used by RevisionContentAtHead1764900000000 and
 * ChangeStoredBytes1765000000000 (shipped 2026-12-01). Its behaviour (the SQL it sends, per dialect)
 * may never change once a shipped migration uses it, and it imports nothing but TypeORM's types; a
 * migration that needs something else gets its own helper (issue 42, "Migrations frozen").
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
