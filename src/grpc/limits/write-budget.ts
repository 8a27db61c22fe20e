import { planErrors } from "../../plans/errors";
import { StoredBytesWindow } from "./stored-bytes-window";

/**
 * The bytes of plan text one caller may store per window (PLAN_WRITE_BUDGET_BYTES over
 * PLAN_WRITE_BUDGET_WINDOW_MS), beside the per-task history budget: that one bounds what a task
 * holds, this one how fast a caller fills tasks (issue 40: one subject stored 267 MB in 12.7 s
 * over four tasks, each stopping at its own budget).
 */
export interface WriteBudget {
  /**
   * Before a write: throws RESOURCE_EXHAUSTED WRITE_BUDGET_EXCEEDED (with RetryInfo: the time until
   * enough of the caller's bytes leave the window) when the caller's window already holds the budget.
   */
  admit(callerKey: string): void;
  /** After a write committed: the bytes it stored count against the caller's window. */
  charge(callerKey: string, bytes: number): void;
  /** The budget as configured (0: none). */
  readonly bytes: number;
  readonly windowMs: number;
}

/**
 * A write budget counted in this process (with N replicas a caller may store up to N times it).
 * The size of a write is known only once it committed, so a write is admitted while the window is
 * below the budget and charged after: a caller may pass the budget by the writes it has in flight
 * when it reaches it (each at most one revision and one change copy of a plan, plus any change rows
 * the write had to materialize). `bytes` 0 admits everything and counts nothing. At most `maxKeys`
 * callers are remembered (stored-bytes-window.ts): beyond that the least recently charged starts afresh.
 */
export function writeBudget(
  bytes: number,
  windowMs: number,
  clock: () => number = () => performance.now(),
  maxKeys = 10_000,
): WriteBudget {
  if (bytes === 0) return { bytes, windowMs, admit: () => undefined, charge: () => undefined };
  const window = new StoredBytesWindow(windowMs, maxKeys);
  return {
    bytes,
    windowMs,
    admit(callerKey) {
      const now = clock();
      if (window.total(callerKey, now) < bytes) return;
      const retryDelayMs = Math.max(1, Math.ceil(window.msUntilBelow(callerKey, bytes, now)));
      throw planErrors.writeBudgetExceeded(bytes, windowMs, retryDelayMs);
    },
    charge(callerKey, stored) {
      window.charge(callerKey, stored, clock());
    },
  };
}
