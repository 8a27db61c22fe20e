import type { HistoryAllowance, HistoryUsage } from "../ports/records";
import { planErrors } from "../errors";

/** Most history a task may hold; 0 means no limit (PLAN_HISTORY_MAX_REVISIONS / _BYTES). */
export interface HistoryBudget {
  readonly maxRevisions: number;
  readonly maxBytes: number;
}

/**
 * Refuses a write that takes the task's history past its budget, with RESOURCE_EXHAUSTED
 * HISTORY_QUOTA_EXCEEDED (limit and usage before the write in metadata). `before` is what the
 * write's locking read found and `after` what its commit left (storage adds the write's own rows to
 * the figures kept with HEAD, or to a recount), so every stored copy counts: revisions (reverts and
 * restores included: they are exempt from the plan size limit, not from the budget) and the change
 * history. A write that does not grow a measure always passes it.
 */
export function checkHistoryBudget(budget: HistoryBudget, before: HistoryUsage, after: HistoryUsage): void {
  const exceeded = exceededLimit(budget, before, after);
  if (exceeded === "revisions")
    throw planErrors.historyQuotaExceeded("revisions", budget.maxRevisions, before.revisions);
  if (exceeded === "bytes") throw planErrors.historyQuotaExceeded("bytes", budget.maxBytes, before.bytes);
}

function exceededLimit(
  budget: HistoryBudget,
  before: HistoryUsage,
  after: HistoryUsage,
): "revisions" | "bytes" | null {
  const allowed = historyAllowance(budget, before);
  if (after.revisions > allowed.revisions) return "revisions";
  if (after.bytes > allowed.bytes) return "bytes";
  return null;
}

/**
 * What a content write may leave the history at, given what it held before (pure): exactly what
 * checkHistoryBudget then accepts (a measure may grow up to its limit, and never past what it held
 * before when that was already above). A write that would leave more first trims the task's change
 * history (what WatchPlan resumes from), oldest rows first, toward the byte budget: the change
 * history yields to the budget, the revisions never do. Storage fits the history to it in the
 * write's commit, and recounts a figure it would refuse.
 */
export function historyAllowance(budget: HistoryBudget, before: HistoryUsage): HistoryAllowance {
  return {
    revisions: budget.maxRevisions > 0 ? Math.max(budget.maxRevisions, before.revisions) : Infinity,
    bytes: budget.maxBytes > 0 ? Math.max(budget.maxBytes, before.bytes) : Infinity,
    trimToBytes: budget.maxBytes > 0 ? budget.maxBytes : Infinity,
  };
}
