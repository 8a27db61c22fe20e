import { Metadata } from "@grpc/grpc-js";
import { BadRequest, ErrorInfo, RetryInfo } from "./ts/google/rpc/error_details";
import { Status } from "./ts/google/rpc/status";

/**
 * The service's rich error model on the wire, both ways: the server encodes it into a failed call's
 * trailer and the client package decodes it. One module of the contract package
 * (@taskplans/contract), which both depend on, so the two can never disagree about a type URL.
 */

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

/** Trailing metadata carrying `details` under grpc-status-details-bin (grpc-js has no helper for it). */
export function encodeStatusDetails(details: StatusDetails): Metadata {
  const packed = [];
  if (details.errorInfo)
    packed.push({
      typeUrl: ERROR_INFO_TYPE,
      value: Buffer.from(ErrorInfo.encode(details.errorInfo).finish()),
    });
  if (details.badRequest)
    packed.push({
      typeUrl: BAD_REQUEST_TYPE,
      value: Buffer.from(BadRequest.encode(details.badRequest).finish()),
    });
  if (details.retryInfo)
    packed.push({
      typeUrl: RETRY_INFO_TYPE,
      value: Buffer.from(RetryInfo.encode(details.retryInfo).finish()),
    });
  const status = Status.encode({ code: details.code, message: details.message, details: packed }).finish();
  const metadata = new Metadata();
  metadata.set(STATUS_DETAILS_KEY, Buffer.from(status));
  return metadata;
}

/** Decodes the grpc-status-details-bin trailer; null when the call carried none. */
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
