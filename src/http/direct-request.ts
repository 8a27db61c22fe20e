import type { IncomingMessage } from "node:http";
import type {
  BinaryReadOptions,
  BinaryWriteOptions,
  DescMessage,
  DescMethod,
  JsonReadOptions,
  JsonWriteOptions,
  Message,
} from "@bufbuild/protobuf";
import { toBinary } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  compressionNegotiate,
  createMethodSerializationLookup,
  type Serialization,
} from "@connectrpc/connect/protocol";
import { ReceivedRequest } from "../grpc/wire/received-request";
import { RequestError } from "../grpc/wire/request-error";
import { type HttpScopedCall, scopedCall } from "./grpc-call";
import { forEachHeader } from "./node-request";

/** The router's settings the direct paths honour alike (connect-handler.ts passes the same). */
export interface DirectOptions {
  readonly readMaxBytes: number;
  readonly writeMaxBytes: number;
  readonly maxTimeoutMs: number;
  /**
   * The compressions the router offers; a unary answer is compressed as the router would. (Mutable
   * only in type: the library's negotiation takes it so, and the direct paths pass it as it is.)
   */
  readonly acceptCompression: Compression[];
  readonly compressMinBytes: number;
  readonly jsonOptions: Partial<JsonReadOptions & JsonWriteOptions>;
  readonly binaryOptions: Partial<BinaryReadOptions & BinaryWriteOptions>;
}

/**
 * Whether a request sends its body (or its stream's messages) compressed, or names a compression
 * the router does not offer, by the library's own negotiation: such a request is the router's.
 */
export function compressedRequest(available: Compression[], encoding: string | null): boolean {
  const negotiated = compressionNegotiate(available, encoding, null, "accept-encoding");
  return negotiated.request !== null || negotiated.error !== undefined;
}

/** What is left of a request's timeout (ms) now, counted from its arrival; undefined: none set. */
export function remainingMs(arrived: number, timeoutMs: number | undefined): number | undefined {
  return timeoutMs === undefined ? undefined : Math.max(0, arrived + timeoutMs - Date.now());
}

/** The library's serialization of a method's request and answer, with the router's settings. */
export function serializationOf(method: DescMethod, options: DirectOptions) {
  return createMethodSerializationLookup(method, options.binaryOptions, options.jsonOptions, options);
}

/**
 * A direct path's call as the call scope sees it; what the scope sends goes to `responseHeaders`,
 * the handler's trailers to `setTrailer`.
 */
export function directScopedCall(
  req: IncomingMessage,
  peer: string,
  timeoutMs: number | undefined,
  responseHeaders: Record<string, string>,
  setTrailer: (key: string, value: string) => void,
): HttpScopedCall {
  return scopedCall({
    protocol: "connect",
    peer,
    timeoutMs,
    forEachHeader: (visit) => forEachHeader(req, visit),
    setResponseHeader: (key, value) => (responseHeaders[key] = value),
    setResponseTrailer: setTrailer,
  });
}

/** What a direct path needs of a method to hand a request to the gRPC port's handler. */
export interface Receiving {
  readonly input: DescMessage;
  /** The request as the gRPC port receives wire bytes (its deserializer: checked and decoded in the call's scope). */
  receive(bytes: Uint8Array): ReceivedRequest<unknown>;
}

const JSON_REMEDY =
  "Send the request as JSON in the proto3 JSON mapping (field names in lowerCamelCase, 64-bit integers as strings, enums by name; docs/http.md) and retry.";

/**
 * A request body of a direct path (connect-unary.ts, connect-stream.ts) as the gRPC port's handler
 * receives it, decoded only inside the call's scope, so that a body that is not a valid request gets
 * what a malformed gRPC request gets: INVALID_ARGUMENT with an ErrorInfo (MALFORMED_REQUEST or
 * INVALID_UTF8), a request id, a log line and a metric. Binary is the protobuf wire format: the port's
 * own bytes. JSON is parsed by Connect's serialization (the proto3 JSON mapping, unknown fields
 * refused, strict UTF-8), then encoded for the port.
 */
export function directReceived(
  method: Receiving,
  json: Serialization<Message>,
  body: Uint8Array,
  binary: boolean,
): ReceivedRequest<unknown> {
  if (binary) return method.receive(body);
  return new ReceivedRequest(Buffer.from(body.buffer, body.byteOffset, body.byteLength), (bytes) => {
    let message;
    try {
      message = json.parse(bytes);
    } catch (error) {
      throw jsonRefusal(error, method.input.typeName);
    }
    return method.receive(toBinary(method.input, message)).decode();
  });
}

/** Why a JSON body was refused, from Connect's parse error (pure). */
export function jsonRefusal(error: unknown, typeName: string): RequestError {
  const cause = error instanceof ConnectError ? error.cause : error;
  if ((cause as { code?: unknown } | null)?.code === "ERR_ENCODING_INVALID_ENCODED_DATA")
    return new RequestError("INVALID_UTF8", null, "the body is not valid UTF-8", JSON_REMEDY);
  const text = error instanceof ConnectError ? error.rawMessage : String(error);
  const why = text.replace(/^cannot decode message \S+ from JSON: /, "");
  return new RequestError(
    "MALFORMED_REQUEST",
    null,
    `the body is not a valid ${typeName} (${why})`,
    JSON_REMEDY,
  );
}
