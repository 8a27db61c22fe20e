import type { MigrationInterface, QueryRunner } from "typeorm";

// The change history WatchPlan streams: one row per committed write, inserted in the write's own
// transaction (so a committed write always has its row and a rolled-back one never does), keyed by
// the plan version it produced and a step (1: the implementation-started mark at that version).
// `plan` is the changed plan's metadata as JSON; `content` the plan content after the change, copied
// from HEAD by the database (never sent by the service; appends keep no copy since
// ChangeContentPrefix1764800000000). Pruned by age and count per task.
const mysql = [
  `CREATE TABLE task_plan_changes (
    task_id VARCHAR(128) NOT NULL,
    version BIGINT NOT NULL,
    step TINYINT NOT NULL,
    kind VARCHAR(32) NOT NULL,
    committed_at BIGINT NOT NULL,
    plan TEXT NOT NULL,
    revision_id VARCHAR(36) NULL,
    revision_number INT NULL,
    revision_coalesced TINYINT NULL,
    author_kind VARCHAR(16) NOT NULL,
    author_name VARCHAR(1000) NOT NULL,
    content MEDIUMTEXT NULL,
    PRIMARY KEY (task_id, version, step),
    KEY idx_task_plan_changes_age (committed_at),
    CONSTRAINT fk_task_plan_changes_task FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
];

const sqlite = [
  `CREATE TABLE task_plan_changes (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    committed_at INTEGER NOT NULL,
    plan TEXT NOT NULL,
    revision_id TEXT NULL,
    revision_number INTEGER NULL,
    revision_coalesced INTEGER NULL,
    author_kind TEXT NOT NULL,
    author_name TEXT NOT NULL,
    content TEXT NULL,
    PRIMARY KEY (task_id, version, step)
  )`,
  `CREATE INDEX idx_task_plan_changes_age ON task_plan_changes (committed_at)`,
];

/** The plan change history (WatchPlan), for both dialects. */
export class PlanChanges1764700000000 implements MigrationInterface {
  name = "PlanChanges1764700000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of queryRunner.connection.options.type === "mysql" ? mysql : sqlite) {
      await queryRunner.query(statement);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("DROP TABLE task_plan_changes");
  }
}
