import { planErrors } from "./errors";

/** Most history a task may hold; 0 means no limit (PLAN_HISTORY_MAX_REVISIONS / _BYTES). */
export interface HistoryBudget {
  readonly maxRevisions: number;
  readonly maxBytes: number;
}

/** What a task's history holds: its revisions, and every stored copy of plan text in it. */
export interface HistoryUsage {
  readonly revisions: number;
  /**
   * UTF-8 bytes of plan text the history stores: the revisions' contents and the change history's
   * copies (WatchPlan's rows: a full copy for every write but an append, which keeps its tail).
   */
  readonly bytes: number;
}

/** The revision a write stores: a new one, or the newest rewritten in place (coalesced). */
export interface HistoryGrowth {
  readonly revisionBytes: number;
  /** Bytes of the revision being rewritten when coalescing; null for a new revision. */
  readonly replacedBytes: number | null;
}

/**
 * Refuses a write that takes the task's history past its budget, with RESOURCE_EXHAUSTED
 * HISTORY_QUOTA_EXCEEDED (limit and usage before the write in metadata). `before` and `after` are
 * measured in the write's own transaction, before and after its rows, so every stored copy counts:
 * revisions (reverts and restores included: they are exempt from the plan size limit, not from the
 * budget) and the change history. A write that does not grow a measure always passes it.
 */
export function checkHistoryBudget(budget: HistoryBudget, before: HistoryUsage, after: HistoryUsage): void {
  if (
    budget.maxRevisions > 0 &&
    after.revisions > budget.maxRevisions &&
    after.revisions > before.revisions
  ) {
    throw planErrors.historyQuotaExceeded("revisions", budget.maxRevisions, before.revisions);
  }
  if (budget.maxBytes > 0 && after.bytes > budget.maxBytes && after.bytes > before.bytes) {
    throw planErrors.historyQuotaExceeded("bytes", budget.maxBytes, before.bytes);
  }
}

/**
 * How many bytes the history holds beyond its byte budget (0 when within it, or without one). A
 * write trims that much of the task's change history, oldest first, before checkHistoryBudget: the
 * change history (what WatchPlan resumes from) yields to the budget, the revisions never do.
 */
export function historyOverBudget(budget: HistoryBudget, usage: HistoryUsage): number {
  return budget.maxBytes > 0 ? Math.max(0, usage.bytes - budget.maxBytes) : 0;
}

/**
 * Whether the write could take the history past its budget, judged without reading the history.
 * A task's revisions are numbered 1..latestNumber with no gaps reused (so they are at most that
 * many); its change rows are at most two per version (a write and its implementation-started mark)
 * up to `headVersion`, each holding at most two copies (a copy and an append's tail); and no copy
 * is larger than `maxRevisionBytes` (every content write is held to the plan size limit; reverts
 * and restores copy revisions that were). False means checkHistoryBudget would pass, so the usage
 * queries can be skipped.
 */
export function mayExceedHistoryBudget(
  budget: HistoryBudget,
  history: { readonly latestNumber: number; readonly headVersion: number },
  growth: HistoryGrowth,
  maxRevisionBytes: number,
): boolean {
  const revisionsAtMost = history.latestNumber + (growth.replacedBytes === null ? 1 : 0);
  const copiesAtMost = revisionsAtMost + 4 * (history.headVersion + 1);
  const bytesAtMost = copiesAtMost * Math.max(maxRevisionBytes, growth.revisionBytes);
  return (
    (budget.maxRevisions > 0 && revisionsAtMost > budget.maxRevisions) ||
    (budget.maxBytes > 0 && bytesAtMost > budget.maxBytes)
  );
}
