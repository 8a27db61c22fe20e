import type { MigrationInterface, QueryRunner } from "typeorm";

// One logical schema, written per dialect so each gets its native types: MySQL/MariaDB needs
// MEDIUMTEXT (TEXT stops at 64 KiB, below the 256 KiB plan limit), utf8mb4 and a binary collation
// (ids and titles compare exactly, as in SQLite).
const MYSQL_TABLE = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

const mysql = [
  `CREATE TABLE tasks (
    id VARCHAR(128) NOT NULL,
    workspace_id VARCHAR(128) NOT NULL,
    title VARCHAR(1000) NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (id),
    KEY idx_tasks_workspace (workspace_id)
  ) ${MYSQL_TABLE}`,
  `CREATE TABLE task_plans (
    task_id VARCHAR(128) NOT NULL,
    title VARCHAR(1000) NOT NULL,
    content MEDIUMTEXT NOT NULL,
    content_bytes INT NOT NULL,
    content_chars INT NOT NULL,
    version BIGINT NOT NULL,
    created_by VARCHAR(16) NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    latest_revision_number INT NOT NULL,
    deleted TINYINT NOT NULL DEFAULT 0,
    implementation_started_at BIGINT NULL,
    implementation_started_by VARCHAR(1000) NULL,
    implementation_started_session_id VARCHAR(128) NULL,
    PRIMARY KEY (task_id),
    CONSTRAINT fk_task_plans_task FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE
  ) ${MYSQL_TABLE}`,
  `CREATE TABLE task_plan_revisions (
    id VARCHAR(36) NOT NULL,
    task_id VARCHAR(128) NOT NULL,
    revision_number INT NOT NULL,
    title VARCHAR(1000) NOT NULL,
    content MEDIUMTEXT NOT NULL,
    content_bytes INT NOT NULL,
    content_chars INT NOT NULL,
    author_kind VARCHAR(16) NOT NULL,
    author_name VARCHAR(1000) NOT NULL,
    revert_of_revision_id VARCHAR(36) NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    row_version INT NOT NULL DEFAULT 1,
    PRIMARY KEY (id),
    UNIQUE KEY uq_revisions_task_number (task_id, revision_number),
    CONSTRAINT fk_revisions_task FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE
  ) ${MYSQL_TABLE}`,
];

const sqlite = [
  `CREATE TABLE tasks (
    id TEXT NOT NULL PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX idx_tasks_workspace ON tasks (workspace_id)`,
  `CREATE TABLE task_plans (
    task_id TEXT NOT NULL PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    content_bytes INTEGER NOT NULL,
    content_chars INTEGER NOT NULL,
    version INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    latest_revision_number INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    implementation_started_at INTEGER NULL,
    implementation_started_by TEXT NULL,
    implementation_started_session_id TEXT NULL
  )`,
  `CREATE TABLE task_plan_revisions (
    id TEXT NOT NULL PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    revision_number INTEGER NOT NULL,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    content_bytes INTEGER NOT NULL,
    content_chars INTEGER NOT NULL,
    author_kind TEXT NOT NULL,
    author_name TEXT NOT NULL,
    revert_of_revision_id TEXT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    row_version INTEGER NOT NULL DEFAULT 1,
    UNIQUE (task_id, revision_number)
  )`,
];

/** Tasks, plan HEADs (with version and tombstone) and revisions, for SQLite and MySQL/MariaDB. */
export class InitialSchema1764400000000 implements MigrationInterface {
  name = "InitialSchema1764400000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    const statements = queryRunner.connection.options.type === "mysql" ? mysql : sqlite;
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ["task_plan_revisions", "task_plans", "tasks"]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
