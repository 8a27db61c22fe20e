import { type Metadata, status } from "@grpc/grpc-js";
import { AuthenticationError, type AuthenticationReason } from "../auth/authentication-error";
import { type FieldViolation, PlanError, planErrors, type Reason } from "../plans/errors";
import {
  CommitOutcomeUnknownError,
  type CorruptContent,
  StorageConflictError,
  StorageCorruptionError,
  StorageUnavailableError,
} from "../plans/ports/store-errors";
import { LockUnavailableError } from "../plans/ports/task-lock";
import { BadRequest, RetryInfo } from "@taskplans/contract";
import { RequestError, type RequestReason } from "./wire/request-error";
import { ERROR_DOMAIN, encodeStatusDetails } from "@taskplans/contract";

/** The one table from domain reasons to gRPC codes (DESIGN.md "Errors on the wire"). */
export const CODE_OF_REASON: Readonly<Record<Reason | AuthenticationReason | RequestReason, status>> =
  Object.freeze({
    MALFORMED_REQUEST: status.INVALID_ARGUMENT,
    INVALID_UTF8: status.INVALID_ARGUMENT,
    INVALID_FIELD: status.INVALID_ARGUMENT,
    INVALID_WRITE_MODE: status.INVALID_ARGUMENT,
    CONTENT_REQUIRED: status.INVALID_ARGUMENT,
    FRAGMENT_BLANK: status.INVALID_ARGUMENT,
    VERSION_REQUIRED: status.INVALID_ARGUMENT,
    REDUCTION_ACK_NOT_APPLICABLE: status.INVALID_ARGUMENT,
    TASK_NOT_REACHABLE: status.PERMISSION_DENIED,
    TOKEN_MISSING: status.UNAUTHENTICATED,
    TOKEN_INVALID: status.UNAUTHENTICATED,
    TOKEN_EXPIRED: status.UNAUTHENTICATED,
    TOKEN_KEY_UNKNOWN: status.UNAUTHENTICATED,
    TASK_NOT_FOUND: status.NOT_FOUND,
    PLAN_NOT_FOUND: status.NOT_FOUND,
    REVISION_NOT_FOUND: status.NOT_FOUND,
    TASK_EXISTS: status.ALREADY_EXISTS,
    PLAN_EXISTS: status.ALREADY_EXISTS,
    VERSION_MISMATCH: status.ABORTED,
    WRITE_CONFLICT: status.ABORTED,
    PLAN_TOO_LARGE: status.FAILED_PRECONDITION,
    REDUCTION_NOT_ACKNOWLEDGED: status.FAILED_PRECONDITION,
    PLAN_READ_FAILED: status.UNAVAILABLE,
    STORAGE_UNAVAILABLE: status.UNAVAILABLE,
    LOCK_UNAVAILABLE: status.UNAVAILABLE,
    EDIT_TEXT_REQUIRED: status.INVALID_ARGUMENT,
    EDIT_TEXT_NOT_FOUND: status.FAILED_PRECONDITION,
    EDIT_TEXT_NOT_UNIQUE: status.FAILED_PRECONDITION,
    REVISION_VERSION_REQUIRED: status.INVALID_ARGUMENT,
    REVISION_CHANGED: status.ABORTED,
    OFFSET_OUT_OF_RANGE: status.OUT_OF_RANGE,
    REQUEST_ID_REUSED: status.INVALID_ARGUMENT,
    HISTORY_QUOTA_EXCEEDED: status.RESOURCE_EXHAUSTED,
    RATE_LIMITED: status.RESOURCE_EXHAUSTED,
    WRITE_BUDGET_EXCEEDED: status.RESOURCE_EXHAUSTED,
    EXPENSIVE_CALLS_LIMITED: status.RESOURCE_EXHAUSTED,
    WATCH_HISTORY_EXPIRED: status.OUT_OF_RANGE,
    WATCH_TOO_SLOW: status.RESOURCE_EXHAUSTED,
    WATCH_DRAINING: status.UNAVAILABLE,
    WATCH_STREAMS_EXHAUSTED: status.RESOURCE_EXHAUSTED,
    HISTORY_UNAVAILABLE: status.OUT_OF_RANGE,
    MERGE_CONFLICT: status.ABORTED,
    MERGE_NOT_APPLICABLE: status.INVALID_ARGUMENT,
    EXPORT_CHANGED: status.ABORTED,
    IMPORT_INVALID: status.INVALID_ARGUMENT,
    IMPORT_NOT_PERMITTED: status.PERMISSION_DENIED,
    IMPORT_CONFLICT: status.ALREADY_EXISTS,
    COMMIT_OUTCOME_UNKNOWN: status.UNAVAILABLE,
  });

/** What a failed call sends: code, message and the grpc-status-details-bin trailer. */
export interface WireError {
  readonly code: status;
  readonly details: string;
  readonly metadata: Metadata;
  /** ErrorInfo.reason (for logs and metrics). */
  readonly reason: string;
  /** True for unexpected errors, which the caller sees only as INTERNAL "internal error". */
  readonly internal: boolean;
  /** Stored content that failed its read check (PLAN_READ_FAILED): logged at error level, never sent. */
  readonly corrupt?: CorruptContent;
}

/** The log message of a PLAN_READ_FAILED (the runbook's "A plan that cannot be read" searches for it). */
export const CORRUPT_CONTENT = "stored content failed its read check";

/**
 * The domain error an expected failure of a port stands for (the failures plans/ports declares,
 * which storage and the lock raise and nothing in between translates), or null.
 */
function portFailure(error: unknown, during: "write" | "read"): PlanError | null {
  if (error instanceof LockUnavailableError) return planErrors.lockUnavailable();
  if (error instanceof StorageConflictError) return planErrors.writeConflict();
  if (error instanceof StorageUnavailableError) return planErrors.storageUnavailable();
  if (error instanceof CommitOutcomeUnknownError) return planErrors.commitOutcomeUnknown();
  if (error instanceof StorageCorruptionError) return planErrors.planReadFailed(during, error);
  return null;
}

/**
 * Maps any error to what goes on the wire, the one place errors are shaped. Domain errors and the
 * ports' failures keep their reason, message and metadata; a failed write (`notDone`: what did not
 * happen, e.g. "Plan was not changed") leads its message with it. Anything else becomes INTERNAL
 * "internal error" with the request id, and its text is only logged.
 */
export function toWireError(error: unknown, requestId: string, notDone: string | null = null): WireError {
  const domain = error instanceof PlanError ? error : portFailure(error, notDone ? "write" : "read");
  if (domain) {
    const shaped = wire(
      CODE_OF_REASON[domain.reason],
      notDone ? domain.notDoneMessage(notDone) : domain.message,
      domain.reason,
      { ...domain.metadata, request_id: requestId },
      domain.fieldViolations,
      domain.retryDelayMs,
    );
    return domain.cause instanceof StorageCorruptionError
      ? { ...shaped, corrupt: domain.cause.corrupt }
      : shaped;
  }
  if (error instanceof RequestError) {
    const violations = error.field ? [{ field: error.field, description: error.detail }] : [];
    const metadata = { ...(error.field ? { field: error.field } : {}), request_id: requestId };
    return wire(CODE_OF_REASON[error.reason], error.message, error.reason, metadata, violations);
  }
  if (error instanceof AuthenticationError) {
    const metadata = {
      ...(error.detail ? { cause: error.detail } : {}),
      next_action: error.nextAction,
      request_id: requestId,
    };
    return wire(CODE_OF_REASON[error.reason], error.message, error.reason, metadata, []);
  }
  return {
    ...wire(status.INTERNAL, "internal error", "INTERNAL", { request_id: requestId }, []),
    internal: true,
  };
}

function wire(
  code: status,
  message: string,
  reason: string,
  metadata: Record<string, string>,
  fieldViolations: readonly FieldViolation[],
  retryDelayMs: number | null = null,
): WireError {
  return {
    code,
    details: message,
    reason,
    metadata: encodeStatusDetails({
      code,
      message,
      errorInfo: { reason, domain: ERROR_DOMAIN, metadata },
      badRequest:
        fieldViolations.length > 0
          ? BadRequest.fromPartial({
              fieldViolations: fieldViolations.map((v) => ({ ...v, reason: reason })),
            })
          : null,
      retryInfo:
        retryDelayMs === null
          ? null
          : RetryInfo.fromPartial({
              retryDelay: {
                seconds: Math.floor(retryDelayMs / 1000),
                nanos: (retryDelayMs % 1000) * 1_000_000,
              },
            }),
    }),
    internal: false,
  };
}
