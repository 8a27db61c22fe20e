import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { decodeStatusDetails, type ErrorInfo, type StatusDetails } from "@taskplans/contract";

export {
  BAD_REQUEST_TYPE,
  decodeStatusDetails,
  ERROR_DOMAIN,
  ERROR_INFO_TYPE,
  RETRY_INFO_TYPE,
  STATUS_DETAILS_KEY,
  type StatusDetails,
} from "@taskplans/contract";

/** One `google.rpc.BadRequest` field violation. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

const codeName = (code: number): string =>
  (status as unknown as Record<number, string>)[code] ?? String(code);

/**
 * Every failed call of this package rejects with a TaskPlansError. It is a grpc-js ServiceError
 * (`code` is the numeric status, `metadata` the trailers, `details` the message), with the rich error
 * model read once: `codeName`, `reason`, `errorInfo.metadata`, `nextAction`, `fieldViolations`,
 * `retryDelayMs`. `reason` is "" when the error carries no ErrorInfo (raised by the client library:
 * a deadline, a dropped connection).
 */
export class TaskPlansError extends Error implements ServiceError {
  override readonly name = "TaskPlansError";
  readonly code: status;
  readonly details: string;
  readonly metadata: Metadata;
  /** The status code's name ("ABORTED"). */
  readonly codeName: string;
  /** `ErrorInfo.reason` ("VERSION_MISMATCH"), or "" when there is no ErrorInfo. */
  readonly reason: string;
  /** `ErrorInfo` itself (domain and metadata); null when absent. */
  readonly errorInfo: ErrorInfo | null;
  /** `ErrorInfo.metadata.next_action`, or "". */
  readonly nextAction: string;
  readonly fieldViolations: readonly FieldViolation[];
  /** The `RetryInfo` delay in milliseconds, or null when the error carries none. */
  readonly retryDelayMs: number | null;

  constructor(code: status, message: string, metadata = new Metadata(), rich: StatusDetails | null = null) {
    super(`${code} ${codeName(code)}: ${message}`);
    this.code = code;
    this.details = message;
    this.metadata = metadata;
    this.codeName = codeName(code);
    this.errorInfo = rich?.errorInfo ?? null;
    this.reason = this.errorInfo?.reason ?? "";
    this.nextAction = this.errorInfo?.metadata.next_action ?? "";
    this.fieldViolations = (rich?.badRequest?.fieldViolations ?? []).map(({ field, description }) => ({
      field,
      description,
    }));
    const delay = rich?.retryInfo?.retryDelay;
    this.retryDelayMs = delay ? delay.seconds * 1000 + Math.round(delay.nanos / 1e6) : null;
  }

  /** The TaskPlansError of a failed grpc-js call (itself when it already is one). */
  static from(error: ServiceError): TaskPlansError {
    if (error instanceof TaskPlansError) return error;
    const made = new TaskPlansError(
      error.code,
      error.details,
      error.metadata,
      decodeStatusDetails(error.metadata),
    );
    if (error.stack) made.stack = error.stack;
    return made;
  }
}

/** Whether `error` is a failed gRPC call (a grpc-js ServiceError, which every TaskPlansError is). */
export function isServiceError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === "number" &&
    (error as Partial<ServiceError>).metadata instanceof Metadata
  );
}

/** `error` as a TaskPlansError, or null when it is not a failed gRPC call. */
export function taskPlansErrorOf(error: unknown): TaskPlansError | null {
  return isServiceError(error) ? TaskPlansError.from(error) : null;
}

/** The error's rich details, or null for anything else (no trailer, not a gRPC error). */
export function statusDetailsOf(error: unknown): StatusDetails | null {
  return isServiceError(error) ? decodeStatusDetails(error.metadata) : null;
}

/** The google.rpc.ErrorInfo a failed call carried, or null. */
export function errorInfoOf(error: unknown): ErrorInfo | null {
  return statusDetailsOf(error)?.errorInfo ?? null;
}

/** `ErrorInfo.reason` (e.g. "VERSION_MISMATCH"); null when the error carries none. Branch on this, never on messages. */
export function reasonOf(error: unknown): string | null {
  return errorInfoOf(error)?.reason ?? null;
}

/** `ErrorInfo.metadata.next_action`: what the server says to do next; null when absent. */
export function nextActionOf(error: unknown): string | null {
  return errorInfoOf(error)?.metadata.next_action ?? null;
}

/** The status code name of a failed call ("ABORTED", ...), or null for anything else. */
export function codeNameOf(error: unknown): string | null {
  return isServiceError(error) ? codeName(error.code) : null;
}

const hasReason =
  (...reasons: string[]) =>
  (error: unknown): boolean =>
    reasons.includes(reasonOf(error) ?? "");
const hasCode =
  (code: status) =>
  (error: unknown): boolean =>
    isServiceError(error) && error.code === code;

/** VERSION_MISMATCH or REVISION_CHANGED: read again, then decide again. */
export const isVersionMismatch = hasReason("VERSION_MISMATCH", "REVISION_CHANGED");
/** PLAN_NOT_FOUND, TASK_NOT_FOUND or REVISION_NOT_FOUND. */
export const isNotFound = hasReason("PLAN_NOT_FOUND", "TASK_NOT_FOUND", "REVISION_NOT_FOUND");
/** TASK_EXISTS or PLAN_EXISTS. */
export const isAlreadyExists = hasReason("TASK_EXISTS", "PLAN_EXISTS");
/** UNAUTHENTICATED (any reason), or TASK_NOT_REACHABLE. */
export const isAuthError = (error: unknown): boolean =>
  hasCode(status.UNAUTHENTICATED)(error) || hasReason("TASK_NOT_REACHABLE")(error);
/** INVALID_ARGUMENT (any reason). */
export const isInvalidArgument = hasCode(status.INVALID_ARGUMENT);
/** FAILED_PRECONDITION: the content rules (reduction, size, edit text). */
export const isPreconditionFailed = hasCode(status.FAILED_PRECONDITION);
/** RATE_LIMITED, WRITE_BUDGET_EXCEEDED or HISTORY_QUOTA_EXCEEDED. */
export const isRateLimited = hasReason("RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "HISTORY_QUOTA_EXCEEDED");
/** WATCH_HISTORY_EXPIRED: re-read the plan and watch after its version. */
export const isWatchHistoryExpired = hasReason("WATCH_HISTORY_EXPIRED");
/** WATCH_TOO_SLOW: resume after `errorInfo.metadata.resume_after_version`. */
export const isWatchTooSlow = hasReason("WATCH_TOO_SLOW");
/**
 * HISTORY_UNAVAILABLE: the content at the version you gave (GetPlanChanges' since_version, a merge's
 * expected_version) can no longer be derived; read the whole plan (`historyUnavailableOf` has the
 * versions).
 */
export const isHistoryUnavailable = hasReason("HISTORY_UNAVAILABLE");
/**
 * MERGE_CONFLICT: a merge found your change and others' at the same lines and wrote nothing; read
 * the changes since your version, redo your change, retry (`mergeConflictOf` has the regions).
 */
export const isMergeConflict = hasReason("MERGE_CONFLICT");

/**
 * What the retry policy retries, whatever the method: UNAVAILABLE (any reason or none),
 * RESOURCE_EXHAUSTED RATE_LIMITED, WRITE_BUDGET_EXCEEDED or EXPENSIVE_CALLS_LIMITED (all carry RetryInfo: the caller's
 * rate limit and write budget) and ABORTED WRITE_CONFLICT.
 */
export function isRetriable(error: unknown): boolean {
  if (!isServiceError(error)) return false;
  const reason = reasonOf(error);
  if (error.code === status.UNAVAILABLE) return true;
  if (error.code === status.RESOURCE_EXHAUSTED)
    return (
      reason === "RATE_LIMITED" || reason === "WRITE_BUDGET_EXCEEDED" || reason === "EXPENSIVE_CALLS_LIMITED"
    );
  return error.code === status.ABORTED && reason === "WRITE_CONFLICT";
}
