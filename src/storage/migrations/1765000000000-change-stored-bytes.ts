import type { MigrationInterface, QueryRunner } from "typeorm";

// `stored_bytes`: the UTF-8 bytes of plan text a change row holds (its copy of the content and its
// tail), so that the task's history budget counts the change history as well as the revisions
// without measuring every text. NULL in rows written before this migration: the budget measures
// those (COALESCE in TypeOrmWriteTx.historyUsage).
const statements = {
  mysql: "ALTER TABLE task_plan_changes ADD COLUMN stored_bytes BIGINT NULL",
  sqlite: "ALTER TABLE task_plan_changes ADD COLUMN stored_bytes INTEGER NULL",
};

/** The stored size of each change row's text, for both dialects. */
export class ChangeStoredBytes1765000000000 implements MigrationInterface {
  name = "ChangeStoredBytes1765000000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(statements[queryRunner.connection.options.type === "mysql" ? "mysql" : "sqlite"]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("ALTER TABLE task_plan_changes DROP COLUMN stored_bytes");
  }
}
