import type { MigrationInterface, QueryRunner } from "typeorm";

// An append's change row keeps no copy of the plan: its content is the first `content_kept_chars`
// code points of the next version's content, followed by `content_tail` (see ChangeContent in
// records.ts). NULL on every other row, whose `content` column holds a copy (or nothing, for a
// deletion). Rows written before this migration are all copies.
const statements = {
  mysql: [
    "ALTER TABLE task_plan_changes ADD COLUMN content_kept_chars INT NULL",
    "ALTER TABLE task_plan_changes ADD COLUMN content_tail MEDIUMTEXT NULL",
  ],
  sqlite: [
    "ALTER TABLE task_plan_changes ADD COLUMN content_kept_chars INTEGER NULL",
    "ALTER TABLE task_plan_changes ADD COLUMN content_tail TEXT NULL",
  ],
};

/** Change rows whose content is a prefix of the next version's, for both dialects. */
export class ChangeContentPrefix1764800000000 implements MigrationInterface {
  name = "ChangeContentPrefix1764800000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = queryRunner.connection.options.type === "mysql" ? "mysql" : "sqlite";
    for (const statement of statements[dialect]) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("ALTER TABLE task_plan_changes DROP COLUMN content_tail");
    await queryRunner.query("ALTER TABLE task_plan_changes DROP COLUMN content_kept_chars");
  }
}
