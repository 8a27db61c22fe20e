import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import type { ErrorInfo } from "../../../generated/ts/google/rpc/error_details";
import { decodeStatusDetails, type StatusDetails } from "../../../src/contract/rich-status";

export {
  BAD_REQUEST_TYPE,
  decodeStatusDetails,
  ERROR_DOMAIN,
  ERROR_INFO_TYPE,
  RETRY_INFO_TYPE,
  STATUS_DETAILS_KEY,
  type StatusDetails,
} from "../../../src/contract/rich-status";

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
