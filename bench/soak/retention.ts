import type { SoakTask } from "./tasks";
import type { RetentionSettings } from "./types";

/**
 * What the change retention allows the database to hold, from the soak's own record of its writes.
 *
 * A pruning pass runs every `pruneIntervalMs` and may take a while under load, so a row is "due" a
 * grace period after its rule makes it prunable:
 * - age: no change row older than maxAge + interval + grace;
 * - count: a task holds at most maxVersions (+1 for an implementation mark, +1 slack) rows plus the
 *   writes acknowledged within the last interval + grace, plus its writes in flight.
 * The bytes bound adds, per live task, its HEAD, every revision (revisions are kept for ever; the
 * soak knows each one's size from the acknowledgements), its remembered request ids, and the change
 * rows above, with ROW_BYTES of metadata per row. A change row holds at most one copy of the plan
 * (its own content, or the content a non-append write replaced); an append's row holds none, only
 * the trailing whitespace the next append drops. So rows of tasks that only get appends (ledger,
 * contended) hold APPEND_ROW_BYTES, plus the one copy of the creating write; a mixed task's rows
 * each up to its largest plan.
 */
export const GRACE_MS = 5_000;
const ROW_BYTES = 1_024;
const APPEND_ROW_BYTES = 2_048;

/** Change rows committed before this time (ms) must be gone. */
export function staleCutoff(retention: RetentionSettings, now: number): number {
  return now - retention.maxAgeMs - retention.pruneIntervalMs - GRACE_MS;
}

/** Most change rows `task` may hold now. */
export function changeRowsBound(task: SoakTask, retention: RetentionSettings, now: number): number {
  const byCount =
    retention.maxVersions + 2 + task.acksSince(now - retention.pruneIntervalMs - GRACE_MS) + task.inFlight;
  const byAge = task.acksSince(staleCutoff(retention, now)) + 2 + task.inFlight;
  return Math.min(task.writes + 2 + task.inFlight, byCount, byAge);
}

/** Bytes the retention allows the live tasks to hold now (rows and content, before storage overhead). */
export function retainedBytesBound(
  tasks: Iterable<SoakTask>,
  retention: RetentionSettings,
  now: number,
): number {
  let total = 0;
  for (const task of tasks) {
    const changes = changeRowsBound(task, retention, now);
    let revisions = 0;
    for (const bytes of task.revisionBytes.values()) revisions += bytes;
    const changeContent =
      task.kind === "mixed" ? changes * task.maxBytes : changes * APPEND_ROW_BYTES + task.maxBytes;
    total +=
      ROW_BYTES * (2 + task.revisionBytes.size + changes + task.requestIds) +
      task.contentBytes +
      revisions +
      changeContent;
  }
  return total;
}
