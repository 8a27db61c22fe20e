import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type DescMessage, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  compressionNegotiate,
  encodeEnvelope,
  type MethodSerializationLookup,
  pipe,
  type Serialization,
  transformDecompressEnvelope,
  transformParseEnvelope,
  transformSplitEnvelope,
} from "@connectrpc/connect/protocol";
import {
  contentTypeStreamJson,
  contentTypeStreamProto,
  createEndStreamSerialization,
  endStreamFlag,
  parseContentType,
  parseTimeout,
} from "@connectrpc/connect/protocol-connect";
import type { Metadata } from "@grpc/grpc-js";
import { connectErrorOf, type GrpcFailure } from "./connect-error";
import { forEachTrailer } from "./grpc-call";
import type { StreamEndpoint } from "./connect-routes";
import {
  compressedRequest,
  directReceived,
  directScopedCall,
  type DirectOptions,
  remainingMs,
  serializationOf,
} from "./direct-request";
import { closeIfUnread } from "./unread-body";
import { single } from "./node-request";
import { LARGEST_WATCH_MESSAGE } from "../grpc/watch/watch-transport";

const ENVELOPE_PREFIX = 5;

/**
 * Which server-stream requests the direct path serves: a POST with Connect's streaming JSON or
 * binary media type whose messages are neither compressed nor asked compressed (by the library's
 * negotiation over the compressions the router offers; connect-web asks none). Everything else
 * (gRPC-Web, compression, another media type) is the router's. Pure: the compressions offered, the
 * request's method and headers.
 */
export function directStreamExchange(
  available: Compression[],
  method: string | undefined,
  headers: IncomingMessage["headers"],
): { readonly binary: boolean } | null {
  if (method !== "POST" || compressedRequest(available, single(headers["connect-content-encoding"])))
    return null;
  const accepted = single(headers["connect-accept-encoding"]);
  if (compressionNegotiate(available, null, accepted, "connect-accept-encoding").response) return null;
  const type = parseContentType(headers["content-type"] ?? null);
  return type?.stream ? { binary: type.binary } : null;
}

/**
 * Connect's server streaming for the exchanges directStreamExchange picks (WatchPlan), written
 * straight to node:http. The router passes every message through a chain of async iterables
 * and serializes it once per stream. Here a message the handler writes becomes its enveloped JSON or
 * binary once, shared by every stream it is written to (WatchPlan writes one Buffer per change to
 * each stream of its task), and is written with the handler's callback (so its outbox sees a slow
 * client as over gRPC). The request is read by the router's own envelope splitter and size limit,
 * and parsed inside the call's scope (direct-request.ts); the end of the stream is the library's
 * end-stream message.
 * http-door-direct.test.ts holds the two paths to the same bytes. docs/decisions/0013.
 */
export class DirectStream {
  private readonly serialization: MethodSerializationLookup<DescMessage, DescMessage>;
  private readonly endStream;
  // The enveloped message of each encoded output, JSON [0] and binary [1].
  private readonly envelopes = [new WeakMap<Uint8Array, Uint8Array>(), new WeakMap<Uint8Array, Uint8Array>()];

  constructor(
    private readonly endpoint: StreamEndpoint,
    private readonly options: DirectOptions,
  ) {
    this.serialization = serializationOf(endpoint.method, options);
    this.endStream = createEndStreamSerialization(options.jsonOptions);
  }

  /** Serves the request if directStreamExchange picks it; else null (the router's). */
  serve(req: IncomingMessage, res: ServerResponse, peer: string): Promise<void> | null {
    const exchange = directStreamExchange(this.options.acceptCompression, req.method, req.headers);
    return exchange ? this.answer(exchange.binary, req, res, peer) : null;
  }

  private async answer(binary: boolean, req: IncomingMessage, res: ServerResponse, peer: string) {
    const headers: Record<string, string> = {
      "content-type": binary ? contentTypeStreamProto : contentTypeStreamJson,
    };
    const stream = new EnvelopeStream(
      res,
      headers,
      (bytes) => this.envelopeOf(bytes, binary),
      (error, metadata) => encodeEnvelope(endStreamFlag, this.endStream.serialize({ metadata, error })),
    );
    const arrived = Date.now();
    try {
      const timeout = parseTimeout(single(req.headers["connect-timeout-ms"]), this.options.maxTimeoutMs);
      if (timeout.error) throw timeout.error;
      // Not destroyed when the pipeline stops early (a message over the limit): the refusal is
      // written as the stream's end, where the router's reset the connection.
      const input = pipe(
        req.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
        transformSplitEnvelope(this.options.readMaxBytes),
        // No compression was negotiated: a message flagged compressed is refused, as the router does.
        transformDecompressEnvelope(null, this.options.readMaxBytes),
        transformParseEnvelope<Uint8Array>(AS_SENT, endStreamFlag),
      );
      const request = directReceived(
        this.endpoint,
        this.serialization.getI(false),
        await onlyMessage(input),
        binary,
      );
      // The client may have gone while its request was read: nothing is opened for it.
      if (stream.ended) return;
      const timeoutMs = remainingMs(arrived, timeout.timeoutMs);
      // The handler's trailers are the end-stream message's metadata.
      const scoped = directScopedCall(req, peer, timeoutMs, headers, (key, value) =>
        stream.trailer.set(key, value),
      );
      this.endpoint.open(request, Object.assign(stream, scoped));
      stream.opened(timeoutMs);
    } catch (thrown) {
      closeIfUnread(req, res);
      stream.finish(
        thrown instanceof ConnectError
          ? thrown
          : new ConnectError("internal error", Code.Internal, undefined, undefined, thrown),
      );
    }
  }

  private envelopeOf(bytes: Uint8Array, binary: boolean): Uint8Array {
    const cache = this.envelopes[binary ? 1 : 0] as WeakMap<Uint8Array, Uint8Array>;
    let envelope = cache.get(bytes);
    if (!envelope) {
      const message = fromBinary(this.endpoint.method.output, bytes);
      envelope = encodeEnvelope(0, this.serialization.getO(binary).serialize(message));
      cache.set(bytes, envelope);
    }
    return envelope;
  }
}

// A request message's bytes as they came: decoded inside the call's scope (direct-request.ts).
const AS_SENT: Serialization<Uint8Array> = {
  parse: (data) => data,
  serialize: () => {
    throw new Error("a request is never serialized here");
  },
};

/** The one request message of a server stream (Connect's own refusals of none or two). */
async function onlyMessage(input: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const messages: Uint8Array[] = [];
  for await (const message of input) messages.push(message);
  const [first] = messages;
  if (!first)
    throw new ConnectError(
      "protocol error: missing input message for server-streaming method",
      Code.Unimplemented,
    );
  if (messages.length > 1)
    throw new ConnectError(
      "protocol error: received extra input message for server-streaming method",
      Code.Unimplemented,
    );
  return first;
}

/**
 * The grpc-js server-stream call (connect-routes.ts StreamCall, without its scope) over one HTTP
 * response: messages written as envelopes, an "error" from the handler ends the stream with
 * Connect's end-stream message carrying it, `end()` ends it with success (either with the handler's
 * trailers as the end-stream's metadata), and "cancelled" is emitted when the client goes away or
 * the protocol's timeout passes (which then ends the stream deadline_exceeded, as gRPC does). It is
 * its WatchPlan stream's transport too (watch-outbox.ts): a message being written holds its bytes
 * and its envelope (shared by every stream of the same change, JSON up to 6 bytes a character), and
 * a reset closes the connection, which drops what the socket still held for a client that stopped
 * reading.
 */
class EnvelopeStream extends EventEmitter {
  /** The stream is over: finished, or its client went away. */
  ended = false;
  /** The trailers the handler sent: the end-stream message's metadata. */
  readonly trailer = new Headers();
  private deadline: NodeJS.Timeout | null = null;

  constructor(
    private readonly res: ServerResponse,
    private readonly headers: Record<string, string>,
    private readonly envelope: (bytes: Uint8Array) => Uint8Array,
    private readonly endStream: (error: ConnectError | undefined, trailer: Headers) => Uint8Array,
  ) {
    super();
    this.on("error", (failure: GrpcFailure) => {
      forEachTrailer(failure.metadata, (key, value) => this.trailer.set(key, value));
      this.finish(connectErrorOf(failure));
    });
    res.once("close", () => {
      if (this.ended) return;
      this.ended = true;
      this.clearDeadline();
      this.emit("cancelled");
    });
  }

  /** The handler has the call: the headers (with the request id) go now; the deadline runs. */
  opened(timeoutMs: number | undefined): void {
    if (this.ended) return;
    this.head();
    this.res.flushHeaders();
    if (timeoutMs !== undefined)
      this.deadline = setTimeout(() => {
        this.emit("cancelled");
        this.finish(new ConnectError("the operation timed out", Code.DeadlineExceeded));
      }, timeoutMs);
  }

  /** The most one message holds: the largest message and its envelope (JSON: up to 6 bytes a byte). */
  get largestHold(): number {
    const binary = this.headers["content-type"] === contentTypeStreamProto;
    return LARGEST_WATCH_MESSAGE * (binary ? 2 : 7) + ENVELOPE_PREFIX;
  }

  /** What writing `bytes` holds until the client takes it: the message and its envelope. */
  holds(bytes: Uint8Array): { key: object; bytes: number }[] {
    const message = { key: bytes, bytes: bytes.length };
    if (this.ended) return [message];
    try {
      const envelope = this.envelope(bytes);
      return [message, { key: envelope, bytes: envelope.length }];
    } catch {
      return [message]; // write() ends the stream with the error
    }
  }

  /** Drops the response and its connection (what the socket holds for a client that does not read). */
  reset(): void {
    this.res.destroy();
  }

  write(bytes: Uint8Array, written: () => void = () => undefined): boolean {
    if (this.ended) {
      queueMicrotask(written); // nothing more is sent: the message is not held either
      return false;
    }
    let envelope: Uint8Array;
    try {
      envelope = this.envelope(bytes);
    } catch (thrown) {
      // This stream ends (its end-stream carries the error); the handler's other streams go on.
      this.emit("cancelled");
      this.finish(ConnectError.from(thrown, Code.Internal));
      queueMicrotask(written);
      return false;
    }
    this.head();
    return this.res.write(envelope, () => written());
  }

  /** The handler ends the stream with success (grpc-js's `end()`), with its trailers. */
  end(trailer?: Metadata): void {
    forEachTrailer(trailer, (key, value) => this.trailer.set(key, value));
    this.finish();
  }

  /** Ends the stream: the end-stream message, with the error if any. */
  finish(error?: ConnectError): void {
    if (this.ended) return;
    this.ended = true;
    this.clearDeadline();
    this.head();
    this.res.end(this.endStream(error, this.trailer));
  }

  private head(): void {
    if (!this.res.headersSent) this.res.writeHead(200, this.headers);
  }

  private clearDeadline(): void {
    if (this.deadline) clearTimeout(this.deadline);
  }
}
