import type { MigrationInterface, QueryRunner } from "typeorm";

// `content_at_head = 1` marks the newest revision of a live plan whose content is HEAD's (its own
// `content` column is then empty): a coalescing write rewrites the plan once, in HEAD. A write that
// starts a new revision, or deletes the plan, first copies HEAD's content into the marked row
// (PLAN_REVISION_CONTENT_AT_HEAD; rows written before this migration, or with it off, are copies).
const statements = {
  mysql: "ALTER TABLE task_plan_revisions ADD COLUMN content_at_head TINYINT NOT NULL DEFAULT 0",
  sqlite: "ALTER TABLE task_plan_revisions ADD COLUMN content_at_head INTEGER NOT NULL DEFAULT 0",
};

/** The content-at-HEAD mark of task_plan_revisions, for both dialects. */
export class RevisionContentAtHead1764900000000 implements MigrationInterface {
  name = "RevisionContentAtHead1764900000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(statements[queryRunner.connection.options.type === "mysql" ? "mysql" : "sqlite"]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("ALTER TABLE task_plan_revisions DROP COLUMN content_at_head");
  }
}
