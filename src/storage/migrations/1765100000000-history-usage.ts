import type { MigrationInterface, QueryRunner } from "typeorm";
import { historyCountSql } from "../change-writes";
import { sqlDialect } from "../sql-dialect";

const BATCH = 500;

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
    const count = historyCountSql(sqlDialect(mysql ? "mysql" : "sqlite"), "task_plans.task_id");
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
