import type { ChangeKey, ChangeRecord, HistoryAllowance, HistoryUsage } from "../plans/ports/records";
import type { ChangeContent } from "./change-content";
import {
  AFTER_KEY,
  afterKey,
  CHANGE_COLUMNS,
  changeParameters,
  PREFIX_COLUMNS,
  prefixParameters,
} from "./change-rows";
import type { SqlDialect } from "./sql-dialect";
import type { WriteStatements } from "./write-statements";

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
    private readonly statements: WriteStatements,
    private readonly sql: SqlDialect,
  ) {}

  // The task's history measured row by row (historyCountSql); the write path reads the usage kept
  // with HEAD instead, and counts only figures it cannot trust.
  async countHistory(taskId: string): Promise<HistoryUsage> {
    const count = historyCountSql(this.sql, "?");
    const { rows } = await this.statements.send(
      `SELECT ${count.revisions} AS revisions, ${count.bytes} AS bytes`,
      [taskId, taskId, taskId],
    );
    const row = rows[0] as Record<string, number | string | null> | undefined;
    return { revisions: Number(row?.revisions ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  /**
   * A content write's change history yields to its allowance (run before the HEAD write, which keeps
   * the figures returned): when the write would leave more than the allowance (`usage`, of which
   * `own` is the write's own rows), the task's oldest change rows, never one of `ownVersion` or
   * later, are deleted until the history is back at the allowance's byte figure or none is left.
   * Figures still past it are recounted row by row (the kept ones may have drifted), with the write's
   * own rows added, so the budget refuses only what the rows hold.
   */
  async fitToAllowance(
    taskId: string,
    allowance: HistoryAllowance,
    ownVersion: number,
    usage: HistoryUsage,
    own: HistoryUsage,
  ): Promise<HistoryUsage> {
    if (withinAllowance(allowance, usage)) return usage;
    const excess = usage.bytes - allowance.trimToBytes;
    const freed = excess > 0 ? await this.trimChangeHistory(taskId, excess, ownVersion) : 0;
    const trimmed = { ...usage, bytes: usage.bytes - freed };
    if (withinAllowance(allowance, trimmed)) return trimmed;
    const counted = await this.countHistory(taskId);
    return { revisions: counted.revisions + own.revisions, bytes: counted.bytes + own.bytes };
  }

  private changeStoredBytes(): string {
    return changeStoredBytesSql(this.sql);
  }

  // Deletes the task's oldest change rows before `keepFromVersion` until at least `bytes` of stored
  // text are freed (or none is left); returns the bytes freed. A watch resuming from before them
  // ends WATCH_HISTORY_EXPIRED, as after pruning by age.
  private async trimChangeHistory(taskId: string, bytes: number, keepFromVersion: number): Promise<number> {
    let freed = 0;
    let last: ChangeKey | null = null;
    while (freed < bytes) {
      const { rows } = await this.statements.send(
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
    this.statements.defer(`DELETE FROM task_plan_changes WHERE task_id = ? AND NOT ${AFTER_KEY}`, [
      taskId,
      ...afterKey(last),
    ]);
    return freed;
  }

  /** Records the write's change row (deferred, write-statements.ts). */
  recordChange(change: ChangeRecord, content: ChangeContent): void {
    const copied = content.form === "head";
    this.statements.defer(
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
    const { affected } = await this.statements.send(
      `UPDATE task_plan_changes SET stored_bytes = ${this.changeStoredBytes()} + ${HEAD_CONTENT_BYTES},` +
        ` content = ${HEAD_CONTENT}` +
        " WHERE task_id = ? AND version = ? AND content IS NULL AND content_kept_chars IS NOT NULL",
      [taskId, taskId, taskId, version],
    );
    return affected;
  }
}

function withinAllowance(allowance: HistoryAllowance, usage: HistoryUsage): boolean {
  return usage.revisions <= allowance.revisions && usage.bytes <= allowance.bytes;
}
