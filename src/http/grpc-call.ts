import type { IncomingMessage } from "node:http";
import { Metadata } from "@grpc/grpc-js";
import type { HandlerContext } from "@connectrpc/connect";
import { createContextKey } from "@connectrpc/connect";
import type { ScopedCall } from "../grpc/call-scope";
import type { CallProtocol } from "../observability/metrics";

/** The client's address (host:port) as the listener saw it: what a write counts against with auth off. */
export const PEER = createContextKey<string>("unknown");

/** The client's address (host:port) of a request to the listener. */
export function peerOf(req: IncomingMessage): string {
  return `${req.socket.remoteAddress ?? "unknown"}:${req.socket.remotePort ?? 0}`;
}

const PROTOCOL_OF: Readonly<Record<string, CallProtocol>> = { connect: "connect", "grpc-web": "grpc-web" };

// Headers that are framing, not metadata (gRPC's own never reach the call scope either).
const FRAMING = /^(content-|connect-|grpc-|accept|host$|connection$|transfer-encoding$|te$|user-agent$)/;

/** What the call scope needs of an HTTP call, from Connect's handler context or the direct path. */
export interface HttpCallFacts {
  readonly protocol: CallProtocol;
  readonly peer: string;
  /** The protocol's timeout header, in ms; undefined when the client set none. */
  readonly timeoutMs: number | undefined;
  /** Visits each request header (lower-case name). */
  forEachHeader(visit: (value: string, key: string) => void): void;
  setResponseHeader(key: string, value: string): void;
  /** A trailer the handler sends with its answer (the protocol's trailers: Connect's `trailer-` headers, its end-stream metadata, gRPC-Web's trailer frame). */
  setResponseTrailer(key: string, value: string): void;
}

/**
 * The call scope's view of an HTTP call, and what a grpc-js handler sends at its end: the trailers
 * of its callback, of its error, or of its stream's `end()` (the service's own handlers send none
 * but the error details, which connect-error.ts carries).
 */
export type HttpScopedCall = ScopedCall & { sendTrailer(trailer: Metadata | undefined): void };

const STATUS_DETAILS = "grpc-status-details-bin";

/**
 * An HTTP call presented as the gRPC port's call scope sees a grpc-js call (call-scope.ts
 * ScopedCall): its request headers as metadata (authorization, x-request-id, traceparent, ...), the
 * protocol's timeout header as the deadline, the client's address as the peer, and what the scope
 * sends (x-request-id) as response headers.
 */
export function scopedCall(facts: HttpCallFacts): HttpScopedCall {
  const metadata = new Metadata();
  facts.forEachHeader((value, key) => {
    // Binary metadata (-bin) is gRPC's: the scope reads none, and grpc-js wants it as bytes.
    if (!FRAMING.test(key) && !key.endsWith("-bin")) metadata.add(key, value);
  });
  const deadline = facts.timeoutMs === undefined ? Infinity : Date.now() + facts.timeoutMs;
  return {
    metadata,
    protocol: facts.protocol,
    getPeer: () => facts.peer,
    getDeadline: () => deadline,
    sendMetadata: (sent: Metadata) => forEachEntry(sent, facts.setResponseHeader),
    sendTrailer: (trailer: Metadata | undefined) => forEachTrailer(trailer, facts.setResponseTrailer),
  };
}

/**
 * Each trailer a grpc-js handler sends (with its callback, its error or its stream's end), as an
 * HTTP header value; not the error details, which travel in the protocol's own error (connect-error.ts).
 */
export function forEachTrailer(
  trailer: Metadata | undefined,
  visit: (key: string, value: string) => void,
): void {
  if (trailer) forEachEntry(trailer, (key, value) => key !== STATUS_DETAILS && visit(key, value));
}

// Each key of grpc-js metadata with its values as one HTTP header value (repeated ones joined with
// ", ", as HTTP joins them).
function forEachEntry(metadata: Metadata, visit: (key: string, value: string) => void): void {
  for (const key of Object.keys(metadata.getMap()))
    visit(
      key,
      metadata
        .get(key)
        .map((value) => String(value))
        .join(", "),
    );
}

/** A call that Connect's router serves (Connect or gRPC-Web), as the call scope sees it. */
export function scopedCallOf(context: HandlerContext): HttpScopedCall {
  return scopedCall({
    protocol: PROTOCOL_OF[context.protocolName] ?? "connect",
    peer: context.values.get(PEER),
    timeoutMs: context.timeoutMs(),
    forEachHeader: (visit) => context.requestHeader.forEach(visit),
    setResponseHeader: (key, value) => context.responseHeader.set(key, value),
    setResponseTrailer: (key, value) => context.responseTrailer.set(key, value),
  });
}
