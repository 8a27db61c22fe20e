import { createRegistry, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import type { Metadata } from "@grpc/grpc-js";
import { Code, ConnectError } from "@connectrpc/connect";
import { es } from "@taskplans/contract";

/** What a handler of the gRPC port reports on failure: its code, message and trailer (error-mapping.ts). */
export interface GrpcFailure {
  readonly code?: number;
  readonly details?: string;
  readonly metadata?: Metadata;
}

// The details the service sends (error-mapping.ts): every one is sent with its JSON form as
// Connect's `debug`, so a curl user reads the reason and next_action without decoding base64.
const DETAILS = createRegistry(es.ErrorInfoSchema, es.BadRequestSchema, es.RetryInfoSchema);

/**
 * The same error on the HTTP listener: the gRPC status code (Connect's codes are gRPC's), the same
 * message, and the same google.rpc details, decoded from the grpc-status-details-bin trailer the call
 * scope built, as typed details (Connect puts them in the JSON error body with a `debug` JSON copy;
 * gRPC-Web in its own grpc-status-details-bin trailer); a detail of another type (a handler other
 * than the service's: the conformance service) as it came, without the `debug` copy.
 */
export function connectErrorOf(failure: GrpcFailure): ConnectError {
  const code = failure.code && failure.code in Code ? (failure.code as Code) : Code.Internal;
  const error = new ConnectError(failure.details ?? "internal error", code);
  const raw = failure.metadata?.get("grpc-status-details-bin")[0];
  if (Buffer.isBuffer(raw)) {
    for (const any of fromBinary(es.StatusSchema, raw).details) {
      const type = any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1);
      const desc = DETAILS.getMessage(type);
      const value = desc ? anyUnpack(any, desc) : undefined;
      // A detail of a type the service does not send goes as it came (its type and bytes).
      error.details.push(desc && value ? { desc, value } : { type, value: any.value });
    }
  }
  return error;
}
