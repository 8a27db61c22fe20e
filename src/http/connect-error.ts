import { createRegistry, fromBinary, type DescMessage, type Message } from "@bufbuild/protobuf";
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
 * gRPC-Web in its own grpc-status-details-bin trailer).
 */
export function connectErrorOf(failure: GrpcFailure): ConnectError {
  const code = failure.code && failure.code in Code ? (failure.code as Code) : Code.Internal;
  const details: { desc: DescMessage; value: Message }[] = [];
  const raw = failure.metadata?.get("grpc-status-details-bin")[0];
  if (Buffer.isBuffer(raw)) {
    for (const any of fromBinary(es.StatusSchema, raw).details) {
      const desc = DETAILS.getMessage(any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1));
      const value = desc ? anyUnpack(any, desc) : undefined;
      if (desc && value) details.push({ desc, value });
    }
  }
  return new ConnectError(failure.details ?? "internal error", code, undefined, details);
}
