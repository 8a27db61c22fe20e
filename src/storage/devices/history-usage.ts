import type { ChangeKey, HistoryAllowance, HistoryUsage, PlanCommit } from "../../plans/ports/records";
import { AFTER_KEY, afterKey, changeStoredBytesSql } from "../tables/changes";
import { type Cell, placeholders } from "../tables/row";
import type { SqlDialect } from "../sql-dialect";
import type { WriteStatements } from "../transaction";
import { type ChangeContent, changeStoredBytes } from "./prefix-changes";

/**
 * Performance device: the history usage kept with HEAD. A content write is held to its task's
 * history budget (revisions, and bytes of every stored copy of plan text); instead of counting the
 * task's rows on every write, HEAD keeps the figures (`history_revisions`, `history_bytes`) and the
 * version they were kept at (`history_version`).
 *
 * INVARIANT: where HEAD's history_version equals its version, history_revisions is the number of the
 * task's revisions and history_bytes the sum of its revisions' content_bytes and its change rows'
 * stored bytes (countHistory measures both).
 *
 * ORDERING RULE: every write computes the figures after its own rows (ownUsage, plus the change rows
 * it materialized) in its transaction under the task's row lock, and writes them with HEAD (the HEAD
 * statement stamps history_version); the change history yields to a content write's allowance
 * before HEAD is written (fitToAllowance). The only other writer is the change-history pruner, which
 * locks the HEAD rows of the tasks whose rows it deletes and gives their bytes back in the same
 * transaction (giveBack). Figures not stamped with HEAD's version (a replica of an older release
 * wrote HEAD) are recounted under the lock.
 *
 * Tested by test/integration/write-path/history-usage.test.ts ("the history usage kept with HEAD ... equals a
 * full recount after every step of random writes").
 */

/** The figures kept with HEAD (its row read under `cell`), when they can be trusted; a task without a HEAD row has no history. */
export function keptHistoryOf(cell: Cell): HistoryUsage | "recount" {
  if (cell("task_id") == null) return { revisions: 0, bytes: 0 };
  const revisions = cell("history_revisions");
  const bytes = cell("history_bytes");
  const version = cell("history_version");
  if (revisions == null || bytes == null || version == null || Number(version) !== Number(cell("version")))
    return "recount";
  return { revisions: Number(revisions), bytes: Number(bytes) };
}

/** The task's history measured row by row: what the figures kept with HEAD stand for. */
export async function countHistory(
  statements: WriteStatements,
  sql: SqlDialect,
  taskId: string,
): Promise<HistoryUsage> {
  const { rows } = await statements.send(
    "SELECT (SELECT COUNT(*) FROM task_plan_revisions r WHERE r.task_id = ?) AS revisions," +
      " (SELECT COALESCE(SUM(r.content_bytes), 0) FROM task_plan_revisions r WHERE r.task_id = ?)" +
      ` + (SELECT COALESCE(SUM(${changeStoredBytesSql(sql)}), 0) FROM task_plan_changes WHERE task_id = ?) AS bytes`,
    [taskId, taskId, taskId],
  );
  const row = rows[0] as Record<string, number | string | null> | undefined;
  return { revisions: Number(row?.revisions ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/**
 * What a commit's own rows add to its task's history: its change row (held as `content`), and a new
 * revision or what the coalesced one grew by.
 */
export function ownUsage(
  commit: Exclude<PlanCommit, { kind: "delete-task" }>,
  content: ChangeContent,
): HistoryUsage {
  const change = changeStoredBytes(content, commit.head);
  if (commit.kind !== "content") return { revisions: 0, bytes: change };
  const { coalesces, revision } = commit;
  return {
    revisions: coalesces === null ? 1 : 0,
    bytes: change + revision.contentBytes - (coalesces?.contentBytes ?? 0),
  };
}

/**
 * A content write's change history yields to its allowance (run before the HEAD write, which keeps
 * the figures returned): when the write would leave more than the allowance (`usage`, of which
 * `own` is the write's own rows), the task's oldest change rows, never one of `ownVersion` or
 * later, are deleted until the history is back at the allowance's byte figure or none is left.
 * Figures still past it are recounted row by row (the kept ones may have drifted), with the write's
 * own rows added, so the budget refuses only what the rows hold.
 */
export async function fitToAllowance(
  statements: WriteStatements,
  sql: SqlDialect,
  taskId: string,
  allowance: HistoryAllowance,
  ownVersion: number,
  usage: HistoryUsage,
  own: HistoryUsage,
): Promise<HistoryUsage> {
  if (withinAllowance(allowance, usage)) return usage;
  const excess = usage.bytes - allowance.trimToBytes;
  const freed = excess > 0 ? await trimChangeHistory(statements, sql, taskId, excess, ownVersion) : 0;
  const trimmed = { ...usage, bytes: usage.bytes - freed };
  if (withinAllowance(allowance, trimmed)) return trimmed;
  const counted = await countHistory(statements, sql, taskId);
  return { revisions: counted.revisions + own.revisions, bytes: counted.bytes + own.bytes };
}

function withinAllowance(allowance: HistoryAllowance, usage: HistoryUsage): boolean {
  return usage.revisions <= allowance.revisions && usage.bytes <= allowance.bytes;
}

// Deletes the task's oldest change rows before `keepFromVersion` until at least `bytes` of stored
// text are freed (or none is left); returns the bytes freed. A watch resuming from before them
// ends WATCH_HISTORY_EXPIRED, as after pruning by age.
async function trimChangeHistory(
  statements: WriteStatements,
  sql: SqlDialect,
  taskId: string,
  bytes: number,
  keepFromVersion: number,
): Promise<number> {
  let freed = 0;
  let last: ChangeKey | null = null;
  while (freed < bytes) {
    const { rows } = await statements.send(
      `SELECT version, step, ${changeStoredBytesSql(sql)} AS bytes FROM task_plan_changes WHERE task_id = ?` +
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
  statements.defer(`DELETE FROM task_plan_changes WHERE task_id = ? AND NOT ${AFTER_KEY}`, [
    taskId,
    ...afterKey(last),
  ]);
  return freed;
}

/**
 * The pruner's share of the rule: gives the bytes its deleted change rows held back to their tasks'
 * figures, in the transaction that deleted them and holds those tasks' HEAD rows locked. The
 * statement and its parameters.
 */
export function giveBack(freed: ReadonlyMap<string, number>): { sql: string; parameters: unknown[] } {
  const tasks = [...freed.keys()];
  return {
    sql:
      `UPDATE task_plans SET history_bytes = history_bytes - CASE task_id ${tasks.map(() => "WHEN ? THEN ?").join(" ")} END` +
      ` WHERE task_id IN (${placeholders(tasks.length)})`,
    parameters: [...tasks.flatMap((taskId) => [taskId, freed.get(taskId)]), ...tasks],
  };
}
