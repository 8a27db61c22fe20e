import type { ChangeKey, ChangeRecord, HistoryUsage } from "../plans/ports/records";
import type { ChangeContent } from "./change-content";
import {
  AFTER_KEY,
  afterKey,
  CHANGE_COLUMNS,
  changeParameters,
  PREFIX_COLUMNS,
  prefixParameters,
} from "./change-rows";
import type { Send } from "./hot-statement";
import type { SqlDialect } from "./sql-dialect";

/**
 * The HEAD content the transaction wrote, copied by the database into a revision or change row, so
 * that the plan crosses the wire at most once per write (never, for an append). Bound to the task id.
 */
export const HEAD_CONTENT = "(SELECT h.content FROM task_plans h WHERE h.task_id = ?)";
/** Its recorded size (what a copy of it adds to the task's stored history). */
export const HEAD_CONTENT_BYTES = "(SELECT h.content_bytes FROM task_plans h WHERE h.task_id = ?)";

/**
 * The stored text of a change row: recorded, or measured in rows written before it was recorded (or
 * by a replica of an older release).
 */
export function changeStoredBytesSql(sql: SqlDialect): string {
  const { byteLength } = sql;
  return `COALESCE(stored_bytes, COALESCE(${byteLength("content")}, 0) + COALESCE(${byteLength("content_tail")}, 0))`;
}

/**
 * What a task's history holds, measured row by row: its revisions, and the bytes of every stored
 * copy of plan text (its revisions' and its change rows'), for the task whose id is `taskId` (an SQL
 * expression: a bound `?`, or a column of an outer query). What the usage kept with HEAD stands for.
 */
export function historyCountSql(sql: SqlDialect, taskId: string): { revisions: string; bytes: string } {
  return {
    revisions: `(SELECT COUNT(*) FROM task_plan_revisions r WHERE r.task_id = ${taskId})`,
    bytes:
      `((SELECT COALESCE(SUM(r.content_bytes), 0) FROM task_plan_revisions r WHERE r.task_id = ${taskId})` +
      ` + (SELECT COALESCE(SUM(${changeStoredBytesSql(sql)}), 0) FROM task_plan_changes` +
      ` WHERE task_plan_changes.task_id = ${taskId}))`,
  };
}

/**
 * The statements of a write transaction on the change history and on what the task's history
 * holds: the change row the write records, the copies it materializes, the history budget's
 * measure and the change rows that yield to it.
 */
export class ChangeWrites {
  constructor(
    private readonly send: Send,
    private readonly sql: SqlDialect,
  ) {}

  // The task's history measured row by row (historyCountSql); the write path reads the usage kept
  // with HEAD instead, and counts only figures it cannot trust.
  async countHistory(taskId: string): Promise<HistoryUsage> {
    const count = historyCountSql(this.sql, "?");
    const { rows } = await this.send(`SELECT ${count.revisions} AS revisions, ${count.bytes} AS bytes`, [
      taskId,
      taskId,
      taskId,
    ]);
    const row = rows[0] as Record<string, number | string | null> | undefined;
    return { revisions: Number(row?.revisions ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  /** Keeps `usage` with the task's HEAD, stamped with HEAD's version (see locked-state.ts keptHistoryOf). */
  async keepHistory(taskId: string, usage: HistoryUsage): Promise<void> {
    await this.send(
      "UPDATE task_plans SET history_revisions = ?, history_bytes = ?, history_version = version WHERE task_id = ?",
      [usage.revisions, usage.bytes, taskId],
    );
  }

  private changeStoredBytes(): string {
    return changeStoredBytesSql(this.sql);
  }

  async trimChangeHistory(taskId: string, bytes: number, keepFromVersion: number): Promise<number> {
    let freed = 0;
    let last: ChangeKey | null = null;
    while (freed < bytes) {
      const { rows } = await this.send(
        `SELECT version, step, ${this.changeStoredBytes()} AS bytes FROM task_plan_changes WHERE task_id = ?` +
          ` AND version < ?${last ? ` AND ${AFTER_KEY}` : ""} ORDER BY version, step LIMIT 100`,
        [taskId, keepFromVersion, ...(last ? afterKey(last) : [])],
      );
      const page = rows as { version: number | string; step: number | string; bytes: number | string }[];
      for (const row of page) {
        if (freed >= bytes) break;
        freed += Number(row.bytes);
        last = { version: Number(row.version), step: Number(row.step) === 1 ? 1 : 0 };
      }
      if (page.length < 100) break;
    }
    if (last === null) return 0;
    await this.send(`DELETE FROM task_plan_changes WHERE task_id = ? AND NOT ${AFTER_KEY}`, [
      taskId,
      ...afterKey(last),
    ]);
    return freed;
  }

  async recordChange(change: ChangeRecord, content: ChangeContent): Promise<void> {
    const copied = content.form === "head";
    await this.send(
      `INSERT INTO task_plan_changes (${CHANGE_COLUMNS}, ${PREFIX_COLUMNS}, stored_bytes)` +
        ` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${copied ? HEAD_CONTENT : "NULL"}, ?, ?,` +
        ` ${copied ? HEAD_CONTENT_BYTES : "?"})`,
      [
        ...changeParameters(change),
        ...(copied ? [change.taskId] : []),
        ...prefixParameters(content),
        copied ? change.taskId : content.form === "prefix" ? Buffer.byteLength(content.tail, "utf8") : 0,
      ],
    );
  }

  /**
   * Turns the `prefix` change rows of `version` into copies of the HEAD content; returns how many it
   * turned. Runs before the HEAD update, so HEAD_CONTENT is still the content of `version`. The
   * stored size is set first: MySQL evaluates SET left to right, on the values already assigned.
   */
  async materializeChanges(taskId: string, version: number): Promise<number> {
    const { affected } = await this.send(
      `UPDATE task_plan_changes SET stored_bytes = ${this.changeStoredBytes()} + ${HEAD_CONTENT_BYTES},` +
        ` content = ${HEAD_CONTENT}` +
        " WHERE task_id = ? AND version = ? AND content IS NULL AND content_kept_chars IS NOT NULL",
      [taskId, taskId, taskId, version],
    );
    return affected;
  }
}
