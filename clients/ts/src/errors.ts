import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { BadRequest, ErrorInfo, RetryInfo } from "./generated/google/rpc/error_details";
import { Status } from "./generated/google/rpc/status";

/** The trailer that carries a failed call's google.rpc.Status. */
export const STATUS_DETAILS_KEY = "grpc-status-details-bin";
/** The `ErrorInfo.domain` of every error the task-plan service sends. */
export const ERROR_DOMAIN = "taskplans";

/** The `Any.type_url`s of the details this service sends. */
export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
export const BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";
export const RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo";

/** The rich error model of one failed call (google.rpc.Status and the details this service sends). */
export interface StatusDetails {
  readonly code: number;
  readonly message: string;
  readonly errorInfo: ErrorInfo | null;
  readonly badRequest: BadRequest | null;
  readonly retryInfo: RetryInfo | null;
}

/** Decodes the `grpc-status-details-bin` trailer; null when the call carried none. */
export function decodeStatusDetails(metadata: Metadata | undefined): StatusDetails | null {
  const raw = metadata?.get(STATUS_DETAILS_KEY)[0];
  if (!(raw instanceof Buffer)) return null;
  const decoded = Status.decode(raw);
  let errorInfo: ErrorInfo | null = null;
  let badRequest: BadRequest | null = null;
  let retryInfo: RetryInfo | null = null;
  for (const detail of decoded.details) {
    if (detail.typeUrl === ERROR_INFO_TYPE) errorInfo = ErrorInfo.decode(detail.value);
    if (detail.typeUrl === BAD_REQUEST_TYPE) badRequest = BadRequest.decode(detail.value);
    if (detail.typeUrl === RETRY_INFO_TYPE) retryInfo = RetryInfo.decode(detail.value);
  }
  return { code: decoded.code, message: decoded.message, errorInfo, badRequest, retryInfo };
}

/** Whether `error` is a failed gRPC call (a grpc-js ServiceError). */
export function isServiceError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === "number" &&
    (error as Partial<ServiceError>).metadata instanceof Metadata
  );
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
  if (!isServiceError(error)) return null;
  return (status as unknown as Record<number, string>)[error.code] ?? String(error.code);
}
