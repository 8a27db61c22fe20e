/** One client operation of the list-append workload and what became of it. */
export interface OpRecord {
  readonly id: number;
  readonly taskId: string;
  readonly replica: number;
  readonly kind: "append" | "replace" | "edit";
  /** ok: acknowledged; failed: definitely not applied; unknown: may or may not have been applied. */
  outcome: "ok" | "failed" | "unknown";
  /** Plan version the write produced (ok only). */
  version?: number;
  /** What the write applies: the appended token, the replacing document, or the edit's texts. */
  readonly payload: { token?: string; content?: string; oldText?: string; newText?: string };
  reason?: string;
  /** When the call was sent (Date.now()). */
  startedAt?: number;
  /** When the call was answered (Date.now()). */
  endedAt?: number;
}

// Errors after which the write certainly did not commit: rule rejections, lock not obtained, a
// rolled-back conflict. STORAGE_UNAVAILABLE and transport errors may hide a commit in flight.
const DEFINITE_FAILURES = new Set([
  "VERSION_MISMATCH",
  "VERSION_REQUIRED",
  "LOCK_UNAVAILABLE",
  "WRITE_CONFLICT",
  "PLAN_TOO_LARGE",
  "REDUCTION_NOT_ACKNOWLEDGED",
  "EDIT_TEXT_NOT_FOUND",
  "EDIT_TEXT_NOT_UNIQUE",
  "CONTENT_REQUIRED",
  "PLAN_READ_FAILED",
  "READ_BEFORE_WRITE_FAILED",
]);

/** Classifies a failed call by its ErrorInfo reason (empty for transport errors). */
export function outcomeOf(reason: string): "failed" | "unknown" {
  return DEFINITE_FAILURES.has(reason) ? "failed" : "unknown";
}
