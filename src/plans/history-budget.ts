import type { HistoryUsage } from "./ports/records";
import { planErrors } from "./errors";

/** Most history a task may hold; 0 means no limit (PLAN_HISTORY_MAX_REVISIONS / _BYTES). */
export interface HistoryBudget {
  readonly maxRevisions: number;
  readonly maxBytes: number;
}

/**
 * Refuses a write that takes the task's history past its budget, with RESOURCE_EXHAUSTED
 * HISTORY_QUOTA_EXCEEDED (limit and usage before the write in metadata). `before` and `after` are
 * measured in the write's own transaction, before and after its rows, so every stored copy counts:
 * revisions (reverts and restores included: they are exempt from the plan size limit, not from the
 * budget) and the change history. A write that does not grow a measure always passes it.
 */
export function checkHistoryBudget(budget: HistoryBudget, before: HistoryUsage, after: HistoryUsage): void {
  const exceeded = exceededLimit(budget, before, after);
  if (exceeded === "revisions")
    throw planErrors.historyQuotaExceeded("revisions", budget.maxRevisions, before.revisions);
  if (exceeded === "bytes") throw planErrors.historyQuotaExceeded("bytes", budget.maxBytes, before.bytes);
}

/** Whether checkHistoryBudget passes. */
export function historyWithinBudget(
  budget: HistoryBudget,
  before: HistoryUsage,
  after: HistoryUsage,
): boolean {
  return exceededLimit(budget, before, after) === null;
}

function exceededLimit(
  budget: HistoryBudget,
  before: HistoryUsage,
  after: HistoryUsage,
): "revisions" | "bytes" | null {
  if (budget.maxRevisions > 0 && after.revisions > budget.maxRevisions && after.revisions > before.revisions)
    return "revisions";
  if (budget.maxBytes > 0 && after.bytes > budget.maxBytes && after.bytes > before.bytes) return "bytes";
  return null;
}

/**
 * How many bytes the history holds beyond its byte budget (0 when within it, or without one). A
 * write trims that much of the task's change history, oldest first, before checkHistoryBudget: the
 * change history (what WatchPlan resumes from) yields to the budget, the revisions never do.
 */
export function historyOverBudget(budget: HistoryBudget, usage: HistoryUsage): number {
  return budget.maxBytes > 0 ? Math.max(0, usage.bytes - budget.maxBytes) : 0;
}
