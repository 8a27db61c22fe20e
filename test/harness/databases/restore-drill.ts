import { checkHistory, type CheckSummary } from "../jepsen/checker";
import type { OpRecord } from "../jepsen/history";
import { readTask } from "../jepsen/stored-task";
import type { Clients } from "../calls/rpc";
import { execSql } from "./sql";

/** What a restore drill found in the restored database. */
export interface RestoredSummary extends CheckSummary {
  /** Acknowledged writes the backup holds, and those acknowledged after its moment (not in it). */
  readonly inBackup: number;
  readonly afterBackup: number;
  /** Writes acknowledged before the backup began (every one must be in it). */
  readonly beforeBackup: number;
}

// The history usage kept with HEAD against a recount of what the database stores, in one statement
// (test/integration/write-path/history-usage.test.ts compares the same figures after every write).
const USAGE =
  "SELECT p.history_revisions AS kept_revisions, p.history_bytes AS kept_bytes, p.version AS version," +
  " (SELECT COUNT(*) FROM task_plan_revisions r WHERE r.task_id = p.task_id) AS revisions," +
  " (SELECT COALESCE(SUM(r.content_bytes), 0) FROM task_plan_revisions r WHERE r.task_id = p.task_id)" +
  " + (SELECT COALESCE(SUM(c.stored_bytes), 0) FROM task_plan_changes c WHERE c.task_id = p.task_id) AS bytes," +
  " (SELECT MIN(c.version) FROM task_plan_changes c WHERE c.task_id = p.task_id) AS oldest_change," +
  " (SELECT MAX(c.version) FROM task_plan_changes c WHERE c.task_id = p.task_id) AS newest_change," +
  " (SELECT COUNT(DISTINCT c.version) FROM task_plan_changes c WHERE c.task_id = p.task_id) AS change_versions" +
  " FROM task_plans p WHERE p.task_id = ?";

/**
 * Checks a database restored from a backup taken while `history` ran (the list-append workload of
 * test/harness/jepsen) and `backupStartedAt` is when the backup command began, then fenced with
 * the restore fence's margin `fencedBy` (`node dist/src/bin/restore-fence.js`):
 * - the backup is one moment of the history: for each task, the writes acknowledged with a version
 *   up to the restored HEAD's (less the margin) are there, replayed revision by revision by the
 *   list-append checker, and none acknowledged with a later version is (those count as not applied);
 * - every write acknowledged before the backup began is in it;
 * - the fence dropped every change row and every history usage figure kept with HEAD (the next
 *   write recounts them: checkHistoryKept holds again after it);
 * - every task reads through every replica given, at its fenced version.
 * Throws on the first violation.
 */
export async function checkRestored(
  databaseUrl: string,
  taskIds: readonly string[],
  history: readonly OpRecord[],
  backupStartedAt: number,
  replicas: readonly Clients[],
  fencedBy: number,
): Promise<RestoredSummary> {
  const stored = await Promise.all(taskIds.map((taskId) => readTask(databaseUrl, taskId)));
  const tasks = stored.map((task) => ({
    ...task,
    head: { ...task.head, version: task.head.version - fencedBy },
  }));
  const restoredVersion = new Map(tasks.map((t) => [t.taskId, t.head.version]));
  let afterBackup = 0;
  let beforeBackup = 0;
  const snapshot = history.map((op): OpRecord => {
    if (op.outcome !== "ok") return op;
    const inBackup = (op.version ?? 0) <= (restoredVersion.get(op.taskId) ?? 0);
    if ((op.endedAt ?? Infinity) < backupStartedAt) {
      beforeBackup++;
      if (!inBackup)
        throw new Error(
          `restore check failed: ${op.taskId} version ${op.version}, acknowledged before the backup began, is not in it`,
        );
    }
    if (inBackup) return op;
    afterBackup++;
    return { ...op, outcome: "failed", reason: "ACKNOWLEDGED_AFTER_BACKUP" };
  });
  const summary = checkHistory(snapshot, tasks);
  const [fenced] = (await execSql(
    databaseUrl,
    `SELECT (SELECT COUNT(*) FROM task_plan_changes WHERE task_id IN (${taskIds.map(() => "?").join(", ")})) AS changes,` +
      ` (SELECT COUNT(*) FROM task_plans WHERE history_version IS NOT NULL) AS kept`,
    [...taskIds],
  )) as { changes: number | string; kept: number | string }[];
  if (Number(fenced?.changes) !== 0 || Number(fenced?.kept) !== 0)
    throw new Error(
      `restore check failed: the fence left ${fenced?.changes} change rows and ${fenced?.kept} kept history figures`,
    );
  for (const api of replicas)
    for (const task of stored) {
      const plan = (await api.plans.getPlan({ taskId: task.taskId })).plan;
      if (plan?.version !== task.head.version || plan.content !== task.head.content)
        throw new Error(`restore check failed: ${task.taskId} does not read back as stored`);
    }
  return { ...summary, inBackup: summary.ok, afterBackup, beforeBackup };
}

/**
 * The history usage kept with HEAD equals the measured history for each task, and its change log is
 * gap-free up to HEAD (after the restore fence: from the first write after it).
 */
export async function checkHistoryKept(databaseUrl: string, taskIds: readonly string[]): Promise<void> {
  for (const taskId of taskIds) {
    const [row] = (await execSql(databaseUrl, USAGE, [taskId])) as Record<string, number | string | null>[];
    const figure = (name: string) => Number(row?.[name]);
    const kept = [figure("kept_revisions"), figure("kept_bytes")];
    const counted = [figure("revisions"), figure("bytes")];
    if (kept.join() !== counted.join())
      throw new Error(`restore check failed: ${taskId} keeps history usage ${kept} but stores ${counted}`);
    const [oldest, newest, versions] = [
      figure("oldest_change"),
      figure("newest_change"),
      figure("change_versions"),
    ];
    if (newest !== figure("version") || versions !== newest - oldest + 1)
      throw new Error(
        `restore check failed: ${taskId} change log ${oldest}..${newest} holds ${versions} versions, HEAD is ${figure("version")}`,
      );
  }
}
