import type { DataSource, EntityManager } from "typeorm";
import { type Dialect, sqlDialect } from "./sql-dialect";
import { giveBack } from "./devices/history-usage";
import { changeStoredBytesSql } from "./tables/changes";
import { sendStatement } from "./transaction";

/** Which change rows a prune batch takes, oldest first: by age (every task's), or one task's up to a version. */
export type PruneScope =
  { readonly olderThan: Date } | { readonly taskId: string; readonly upToVersion: number };

type Row = { task_id: string; version: number | string; step: number | string; bytes: number | string };

/**
 * Deletes at most `limit` change rows of `scope`, oldest first, and gives the text they held back
 * to their tasks' history usage (kept with HEAD: devices/history-usage.ts), in one transaction; returns the rows deleted.
 *
 * Writers lock a task's HEAD row first and then write its change rows, so a batch does the same:
 * it picks its tasks without locking, locks their HEAD rows in key order, and only then reads the
 * rows it deletes and what they hold (no writer can change them in between). The locks are held for
 * one batch: a few statements.
 */
export async function pruneBatch(
  dataSource: DataSource,
  dialect: Dialect,
  scope: PruneScope,
  limit: number,
): Promise<number> {
  const filter =
    "olderThan" in scope
      ? { sql: "committed_at < ?", parameters: [scope.olderThan.getTime()], order: "committed_at" }
      : {
          sql: "task_id = ? AND version <= ?",
          parameters: [scope.taskId, scope.upToVersion],
          order: "version, step",
        };
  const candidates =
    "olderThan" in scope
      ? (
          (await dataSource.query(
            `SELECT DISTINCT task_id FROM (SELECT task_id FROM task_plan_changes WHERE ${filter.sql}` +
              ` ORDER BY ${filter.order} LIMIT ?) oldest`,
            [...filter.parameters, limit],
          )) as { task_id: string }[]
        ).map((row) => row.task_id)
      : [scope.taskId];
  if (candidates.length === 0) return 0;
  const taskIds = [...candidates].sort();
  const inTasks = `task_id IN (${taskIds.map(() => "?").join(", ")})`;
  return dataSource.transaction(async (manager: EntityManager) => {
    const query = (sql: string, parameters: unknown[]) => manager.query(sql, parameters);
    await query(
      `SELECT task_id FROM task_plans WHERE ${inTasks} ORDER BY task_id${dialect === "mysql" ? " FOR UPDATE" : ""}`,
      taskIds,
    );
    const rows = (await query(
      `SELECT task_id, version, step, ${changeStoredBytesSql(sqlDialect(dialect))} AS bytes FROM task_plan_changes` +
        ` WHERE ${inTasks} AND ${filter.sql} ORDER BY ${filter.order} LIMIT ?`,
      [...taskIds, ...filter.parameters, limit],
    )) as Row[];
    if (rows.length === 0) return 0;
    const freed = new Map<string, number>();
    for (const row of rows) freed.set(row.task_id, (freed.get(row.task_id) ?? 0) + Number(row.bytes));
    if (!manager.queryRunner) throw new Error("a prune batch runs on a query runner");
    // The rows it deleted, as the driver counts them (a plain TypeORM result would not say).
    const { affected: deleted } = await sendStatement(
      manager.queryRunner,
      dialect,
      `DELETE FROM task_plan_changes WHERE ${inTasks} AND (task_id, version, step) IN` +
        ` (${rows.map(() => "(?, ?, ?)").join(", ")})`,
      [...taskIds, ...rows.flatMap((row) => [row.task_id, Number(row.version), Number(row.step)])],
    );
    const given = giveBack(freed);
    await query(given.sql, given.parameters);
    return deleted;
  });
}
