import type { MigrationInterface, QueryRunner } from "typeorm";

// Remembered agent write requests (request_id), for safe retries. Written in the same transaction
// as the write they record; deleted with the task.
const mysql = [
  `CREATE TABLE write_requests (
    task_id VARCHAR(128) NOT NULL,
    request_id VARCHAR(128) NOT NULL,
    fingerprint CHAR(64) NOT NULL,
    result TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, request_id),
    KEY idx_write_requests_age (task_id, created_at),
    CONSTRAINT fk_write_requests_task FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
];

const sqlite = [
  `CREATE TABLE write_requests (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    request_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, request_id)
  )`,
  `CREATE INDEX idx_write_requests_age ON write_requests (task_id, created_at)`,
];

/** Table of remembered request ids, for both dialects. */
export class WriteRequests1764500000000 implements MigrationInterface {
  name = "WriteRequests1764500000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of queryRunner.connection.options.type === "mysql" ? mysql : sqlite) {
      await queryRunner.query(statement);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("DROP TABLE write_requests");
  }
}
