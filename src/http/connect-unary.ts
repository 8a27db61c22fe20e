import type { IncomingMessage, ServerResponse } from "node:http";
import type { DescMessage } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  compressionNegotiate,
  type MethodSerializationLookup,
} from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  contentTypeUnaryJson,
  contentTypeUnaryProto,
  errorToJsonBytes,
  parseContentType,
  parseTimeout,
} from "@connectrpc/connect/protocol-connect";
import type { UnaryEndpoint } from "./connect-routes";
import {
  compressedRequest,
  directReceived,
  directScopedCall,
  type DirectOptions,
  remainingMs,
  serializationOf,
} from "./direct-request";
import { closeIfUnread } from "./unread-body";
import { bodyOf, single } from "./node-request";

/** How a request the direct path serves is framed. */
export interface DirectExchange {
  /** The body (or the GET query's message) and the answer are protobuf binary, not JSON. */
  readonly binary: boolean;
  /** A Connect GET: the message is in the query. */
  readonly query: URLSearchParams | null;
}

/**
 * Which requests the direct path serves: the Connect protocol's unary exchange with an uncompressed
 * request, the one curl, scripts, browsers and most back ends make. A POST whose Content-Type is
 * Connect's unary JSON or binary, or a GET of a method without side effects with
 * `encoding=json|proto`. A request body compressed (or in a compression the router does not offer,
 * which it refuses) and everything else (gRPC-Web, streams, a wrong method or media type, which the
 * router refuses with its own status) is the router's. The answer may be compressed either way.
 * Pure: the method's idempotency, the compressions offered, the request's method, headers, query.
 */
export function directExchange(
  idempotency: MethodOptions_IdempotencyLevel,
  available: Compression[],
  method: string | undefined,
  headers: IncomingMessage["headers"],
  search: string,
): DirectExchange | null {
  if (method === "POST") {
    if (compressedRequest(available, single(headers["content-encoding"]))) return null;
    const type = parseContentType(headers["content-type"] ?? null);
    return type && !type.stream ? { binary: type.binary, query: null } : null;
  }
  if (method === "GET" && idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) {
    const query = new URLSearchParams(search);
    const encoding = query.get("encoding");
    if (compressedRequest(available, query.get("compression"))) return null;
    if (encoding !== "json" && encoding !== "proto") return null;
    return { binary: encoding === "proto", query };
  }
  return null;
}

/**
 * Connect's unary protocol for the exchanges directExchange picks, served straight from node:http:
 * the router's unary handler (its createUnaryHandler) does the same steps with three abort
 * controllers, three Headers copies and async iterables per call, which cost more CPU than the
 * whole call over the gRPC port (docs/decisions/0013). The steps are the library's own: its timeout
 * parser, body reader (the size limit by Content-Length before the body is read), serialization
 * (the proto3 JSON mapping), HTTP status mapping and error JSON. The body is parsed inside the call's
 * scope (direct-request.ts), so a malformed one is refused as over gRPC. http-door-direct.test.ts
 * holds the two paths to the same answers, byte for byte.
 */
export class DirectUnary {
  private readonly serialization: MethodSerializationLookup<DescMessage, DescMessage>;

  constructor(
    private readonly endpoint: UnaryEndpoint,
    private readonly options: DirectOptions,
  ) {
    this.serialization = serializationOf(endpoint.method, options);
  }

  /** Serves the request if directExchange picks it (true); else leaves it to the router. */
  serve(req: IncomingMessage, res: ServerResponse, peer: string, search: string): Promise<void> | null {
    const exchange = directExchange(
      this.endpoint.method.idempotency,
      this.options.acceptCompression,
      req.method,
      req.headers,
      search,
    );
    return exchange ? this.answer(exchange, req, res, peer) : null;
  }

  private async answer(
    exchange: DirectExchange,
    req: IncomingMessage,
    res: ServerResponse,
    peer: string,
  ): Promise<void> {
    const headers: Record<string, string> = {
      "content-type": exchange.binary ? contentTypeUnaryProto : contentTypeUnaryJson,
    };
    const arrived = Date.now();
    const compression = compressionNegotiate(
      this.options.acceptCompression,
      null,
      single(req.headers["accept-encoding"]),
      "accept-encoding",
    );
    let status = 200;
    let body: Uint8Array;
    try {
      const timeout = parseTimeout(single(req.headers["connect-timeout-ms"]), this.options.maxTimeoutMs);
      if (timeout.error) throw timeout.error;
      const bytes = exchange.query ? messageOf(exchange.query) : await bodyOf(req, this.options.readMaxBytes);
      const request = directReceived(this.endpoint, this.serialization.getI(false), bytes, exchange.binary);
      // Connect's unary trailers are headers named `trailer-<name>`.
      const scoped = directScopedCall(
        req,
        peer,
        remainingMs(arrived, timeout.timeoutMs),
        headers,
        (key, value) => (headers[`trailer-${key}`] = value),
      );
      body = this.serialization.getO(exchange.binary).serialize(await this.endpoint.call(request, scoped));
    } catch (thrown) {
      const error =
        thrown instanceof ConnectError
          ? thrown
          : new ConnectError("internal error", Code.Internal, undefined, undefined, thrown);
      status = codeToHttpStatus(error.code);
      headers["content-type"] = contentTypeUnaryJson;
      error.metadata.forEach((value, key) => (headers[key] = value));
      body = errorToJsonBytes(error, this.options.jsonOptions);
    }
    if (compression.response && body.byteLength >= this.options.compressMinBytes) {
      body = await compression.response.compress(body);
      headers["content-encoding"] = compression.response.name;
    }
    headers["content-length"] = String(body.byteLength);
    closeIfUnread(req, res);
    res.writeHead(status, headers);
    res.end(body);
  }
}

/** A Connect GET's message (its `message` parameter, base64 when `base64=1`). */
function messageOf(query: URLSearchParams): Uint8Array {
  const message = query.get("message") ?? "";
  return query.get("base64") === "1" ? base64Decode(message) : new TextEncoder().encode(message);
}
