import { Metadata } from "@grpc/grpc-js";
import type { HandlerContext } from "@connectrpc/connect";
import { createContextKey } from "@connectrpc/connect";
import type { ScopedCall } from "../grpc/call-scope";
import type { CallProtocol } from "../observability/metrics";

/** The client's address (host:port) as the listener saw it: what a write counts against with auth off. */
export const PEER = createContextKey<string>("unknown");

const PROTOCOL_OF: Readonly<Record<string, CallProtocol>> = { connect: "connect", "grpc-web": "grpc-web" };

// Headers that are framing, not metadata (gRPC's own never reach the call scope either).
const FRAMING = /^(content-|connect-|grpc-|accept|host$|connection$|transfer-encoding$|te$|user-agent$)/;

/**
 * A Connect or gRPC-Web call presented as the gRPC port's call scope sees a grpc-js call
 * (call-scope.ts ScopedCall): its request headers as metadata (authorization, x-request-id,
 * traceparent, ...), the protocol's timeout header as the deadline, the client's address as the
 * peer, and what the scope sends (x-request-id) as response headers.
 */
export function scopedCallOf(context: HandlerContext): ScopedCall {
  const metadata = new Metadata();
  context.requestHeader.forEach((value, key) => {
    // Binary metadata (-bin) is gRPC's: the scope reads none, and grpc-js wants it as bytes.
    if (!FRAMING.test(key) && !key.endsWith("-bin")) metadata.add(key, value);
  });
  const timeoutMs = context.timeoutMs();
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  return {
    metadata,
    protocol: PROTOCOL_OF[context.protocolName] ?? "connect",
    getPeer: () => context.values.get(PEER),
    getDeadline: () => deadline,
    sendMetadata: (sent: Metadata) => {
      for (const [key, value] of Object.entries(sent.getMap()))
        context.responseHeader.set(key, String(value));
    },
  };
}
