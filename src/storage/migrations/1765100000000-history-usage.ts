import type { MigrationInterface, QueryRunner } from "typeorm";

const BATCH = 500;

// FROZEN as shipped on 2026-12-01: a copy of what `historyCountSql` (change-writes.ts) and
// `sqlDialect(...).byteLength` (sql-dialect.ts) produced for this migration that day. A fresh
// install replays this migration years later; it must compute the figures it computed then, so
// this text never follows later changes to the write path's SQL (issue 42, "Migrations frozen").
// Do not edit it: a change of how history is counted ships as a new migration.
const BYTE_LENGTH = {
  mysql: (column: string) => `OCTET_LENGTH(${column})`,
  sqlite: (column: string) => `length(CAST(${column} AS BLOB))`,
};

function historyCountAsShipped(dialect: "mysql" | "sqlite"): { revisions: string; bytes: string } {
  const byteLength = BYTE_LENGTH[dialect];
  const storedBytes = `COALESCE(stored_bytes, COALESCE(${byteLength("content")}, 0) + COALESCE(${byteLength("content_tail")}, 0))`;
  return {
    revisions: "(SELECT COUNT(*) FROM task_plan_revisions r WHERE r.task_id = task_plans.task_id)",
    bytes:
      "((SELECT COALESCE(SUM(r.content_bytes), 0) FROM task_plan_revisions r WHERE r.task_id = task_plans.task_id)" +
      ` + (SELECT COALESCE(SUM(${storedBytes}), 0) FROM task_plan_changes` +
      " WHERE task_plan_changes.task_id = task_plans.task_id))",
  };
}

/**
 * The history usage kept with HEAD (`history_revisions`, `history_bytes`, and `history_version`,
 * the HEAD version they were kept at), so that the history budget reads one row per write instead
 * of measuring the task's history. The columns are added NULL (additive: replicas of the previous
 * release keep working while it rolls out), then computed for existing tasks in batches of 500,
 * each its own short statement: no table lock, and a write never waits long behind it. A row whose
 * version moved while its batch was computed is left NULL, as is one written later by a replica of
 * the previous release; the write path recounts such a row the first time it locks it.
 */
export class HistoryUsage1765100000000 implements MigrationInterface {
  readonly name = "HistoryUsage1765100000000";
  // Each batch commits on its own (TypeORM's per-migration transaction would hold every row lock).
  readonly transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.options.type === "mysql";
    const columns: [string, string][] = [
      ["history_revisions", mysql ? "INT NULL" : "INTEGER NULL"],
      ["history_bytes", mysql ? "BIGINT NULL" : "INTEGER NULL"],
      ["history_version", mysql ? "BIGINT NULL" : "INTEGER NULL"],
    ];
    for (const [column, type] of columns) {
      // Outside a transaction a failed run may have added some: a second run goes on from there.
      if (!(await queryRunner.hasColumn("task_plans", column)))
        await queryRunner.query(`ALTER TABLE task_plans ADD COLUMN ${column} ${type}`);
    }
    const count = historyCountAsShipped(mysql ? "mysql" : "sqlite");
    let after = "";
    for (;;) {
      const rows = (await queryRunner.query(
        "SELECT task_id, version FROM task_plans WHERE task_id > ? ORDER BY task_id LIMIT ?",
        [after, BATCH],
      )) as { task_id: string; version: number | string }[];
      if (rows.length === 0) return;
      const ids = rows.map((row) => row.task_id);
      const marks = ids.map(() => "?").join(", ");
      await queryRunner.query(
        `UPDATE task_plans SET history_revisions = ${count.revisions}, history_bytes = ${count.bytes},` +
          " history_version = version" +
          ` WHERE task_id IN (${marks}) AND version = CASE task_id ${ids.map(() => "WHEN ? THEN ?").join(" ")} END`,
        [...ids, ...rows.flatMap((row) => [row.task_id, Number(row.version)])],
      );
      after = ids[ids.length - 1] ?? after;
      if (rows.length < BATCH) return;
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of ["history_version", "history_bytes", "history_revisions"])
      await queryRunner.query(`ALTER TABLE task_plans DROP COLUMN ${column}`);
  }
}
