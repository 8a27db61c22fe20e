import { Metadata } from "@grpc/grpc-js";
import { BadRequest, ErrorInfo, RetryInfo } from "../../generated/ts/google/rpc/error_details";
import { Status } from "../../generated/ts/google/rpc/status";

import {
  BAD_REQUEST_TYPE,
  ERROR_INFO_TYPE,
  RETRY_INFO_TYPE,
  STATUS_DETAILS_KEY,
} from "../../clients/ts/src/errors";

// The wire names are the contract's, shared with the client package that reads them.
export { ERROR_DOMAIN } from "../../clients/ts/src/errors";

/** The rich error model carried by one failed call. */
export interface RichError {
  readonly code: number;
  readonly message: string;
  readonly errorInfo: ErrorInfo | null;
  readonly badRequest: BadRequest | null;
  readonly retryInfo?: RetryInfo | null;
}

/**
 * Encodes a google.rpc.Status (ErrorInfo + optional BadRequest) into trailing metadata under
 * grpc-status-details-bin. grpc-js has no helper for this trailer; clients read it with the client
 * package's decodeStatusDetails (clients/ts).
 */
export function statusDetailsMetadata(error: RichError): Metadata {
  const details = [];
  if (error.errorInfo)
    details.push({
      typeUrl: ERROR_INFO_TYPE,
      value: Buffer.from(ErrorInfo.encode(error.errorInfo).finish()),
    });
  if (error.badRequest) {
    details.push({
      typeUrl: BAD_REQUEST_TYPE,
      value: Buffer.from(BadRequest.encode(error.badRequest).finish()),
    });
  }
  if (error.retryInfo) {
    details.push({
      typeUrl: RETRY_INFO_TYPE,
      value: Buffer.from(RetryInfo.encode(error.retryInfo).finish()),
    });
  }
  const status = Status.encode({ code: error.code, message: error.message, details }).finish();
  const metadata = new Metadata();
  metadata.set(STATUS_DETAILS_KEY, Buffer.from(status));
  return metadata;
}
