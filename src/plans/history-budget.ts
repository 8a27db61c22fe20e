import { planErrors } from "./errors";

/** Most history a task may hold; 0 means no limit (PLAN_HISTORY_MAX_REVISIONS / _BYTES). */
export interface HistoryBudget {
  readonly maxRevisions: number;
  readonly maxBytes: number;
}

/** What a task's revisions hold now. */
export interface HistoryUsage {
  readonly revisions: number;
  /** Sum of the revisions' content sizes in UTF-8 bytes. */
  readonly bytes: number;
}

/** The revision a write stores: a new one, or the newest rewritten in place (coalesced). */
export interface HistoryGrowth {
  readonly revisionBytes: number;
  /** Bytes of the revision being rewritten when coalescing; null for a new revision. */
  readonly replacedBytes: number | null;
}

/**
 * Refuses a write whose revision would take the task's history past its budget, with
 * RESOURCE_EXHAUSTED HISTORY_QUOTA_EXCEEDED (limit and usage in metadata). Applies to every revision,
 * reverts and restores included: they are exempt from the plan size limit, not from the budget (each
 * revert of a 256 KiB plan stores a full copy). A write that does not grow the history always passes.
 */
export function checkHistoryBudget(budget: HistoryBudget, usage: HistoryUsage, growth: HistoryGrowth): void {
  const revisions = usage.revisions + (growth.replacedBytes === null ? 1 : 0);
  const bytes = usage.bytes - (growth.replacedBytes ?? 0) + growth.revisionBytes;
  if (budget.maxRevisions > 0 && revisions > budget.maxRevisions && revisions > usage.revisions) {
    throw planErrors.historyQuotaExceeded("revisions", budget.maxRevisions, usage.revisions);
  }
  if (budget.maxBytes > 0 && bytes > budget.maxBytes && bytes > usage.bytes) {
    throw planErrors.historyQuotaExceeded("bytes", budget.maxBytes, usage.bytes);
  }
}

/**
 * Whether the write could take the history past its budget, judged without reading the history:
 * a task's revisions are numbered 1..latestNumber with no gaps reused (so they are at most that many),
 * and none holds more than `maxRevisionBytes` (every content write is held to the plan size limit;
 * reverts and restores copy revisions that were). False means checkHistoryBudget would pass, so the
 * usage query can be skipped.
 */
export function mayExceedHistoryBudget(
  budget: HistoryBudget,
  latestNumber: number,
  growth: HistoryGrowth,
  maxRevisionBytes: number,
): boolean {
  const revisionsAtMost = latestNumber + (growth.replacedBytes === null ? 1 : 0);
  const bytesAtMost = revisionsAtMost * Math.max(maxRevisionBytes, growth.revisionBytes);
  return (
    (budget.maxRevisions > 0 && revisionsAtMost > budget.maxRevisions) ||
    (budget.maxBytes > 0 && bytesAtMost > budget.maxBytes)
  );
}
