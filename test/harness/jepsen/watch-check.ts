import type { PlanChange } from "@taskplans/contract";
import type { TaskHistory } from "./checker";
import type { OpRecord } from "./history";

/**
 * Checks what a watcher received for one task against the stored history (throws on the first
 * violation): one change per committed version after `from`, each exactly once and in order, each
 * carrying the revision of its version and that revision's content; every acknowledged write's
 * version among them. Since only committed versions have revisions, a write that did not commit
 * cannot have a change.
 */
export function checkWatch(
  received: readonly PlanChange[],
  task: TaskHistory,
  history: readonly OpRecord[],
  from: number,
): number {
  const versions = received.map((c) => c.plan?.version ?? -1);
  const expected = Array.from({ length: task.head.version - from }, (_, i) => from + 1 + i);
  if (JSON.stringify(versions) !== JSON.stringify(expected))
    throw new Error(
      `task ${task.taskId}: watched versions ${summarize(versions)}, stored ${summarize(expected)}`,
    );
  const contents = new Map(task.revisions.map((r) => [r.number, r.content]));
  for (const change of received) {
    const version = change.plan?.version ?? -1;
    if (change.revision?.number !== version)
      throw new Error(
        `task ${task.taskId}: change of version ${version} names revision ${change.revision?.number}`,
      );
    if (change.plan?.content !== contents.get(version))
      throw new Error(
        `task ${task.taskId}: change of version ${version} carries content other than its revision's`,
      );
  }
  const seen = new Set(versions);
  for (const op of history)
    if (op.taskId === task.taskId && op.outcome === "ok" && !seen.has(op.version ?? -1))
      throw new Error(`task ${task.taskId}: acknowledged version ${op.version} was never watched`);
  return versions.length;
}

function summarize(versions: readonly number[]): string {
  return versions.length > 6
    ? `${versions.slice(0, 3).join(",")}..${versions.slice(-3).join(",")} (${versions.length})`
    : versions.join(",");
}
