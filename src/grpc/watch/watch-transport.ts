import { constants as http2 } from "node:http2";
import type { WatchTransport } from "./watch-outbox";

/** A call that writes messages with a callback once each is taken (grpc-js, or the HTTP door's). */
interface WritableCall {
  write(bytes: Buffer, written: () => void): unknown;
}

/** gRPC frames a message by copying it behind a 5-byte prefix (length-prefixed message). */
const GRPC_PREFIX = 5;
/**
 * The largest WatchPlan message: a plan at the size limit (256 KiB) and its metadata (ids, author,
 * title, revision: a few KiB at most).
 */
export const LARGEST_WATCH_MESSAGE = 256 * 1024 + 8 * 1024;

/**
 * The transport of a WatchPlan stream: the HTTP door's call is one itself (connect-stream.ts, which
 * knows what its JSON or binary envelope holds); a grpc-js call holds the message and its own framed
 * copy of it (one per stream, even of a change shared by many), and is reset with RST_STREAM
 * ENHANCE_YOUR_CALM (the client sees RESOURCE_EXHAUSTED), which frees that copy at once: grpc-js
 * itself would keep it until the client read it, since its status goes after every message.
 */
export function watchTransportOf(call: WritableCall): WatchTransport {
  if (isTransport(call)) return call;
  return {
    largestHold: 2 * LARGEST_WATCH_MESSAGE + GRPC_PREFIX,
    holds: (bytes) => [
      { key: bytes, bytes: bytes.length },
      { key: {}, bytes: bytes.length + GRPC_PREFIX },
    ],
    write: (bytes, written) => void call.write(bytes, written),
    reset: () => http2StreamOf(call)?.close(http2.NGHTTP2_ENHANCE_YOUR_CALM),
  };
}

function isTransport(call: WritableCall): call is WritableCall & WatchTransport {
  const candidate = call as Partial<WatchTransport>;
  return typeof candidate.holds === "function" && typeof candidate.reset === "function";
}

interface Resettable {
  close(code: number): void;
}

// grpc-js has no public way to reset a server stream: its call (ServerWritableStreamImpl.call) wraps
// the interceptors' chain (nextCall) down to the call that owns the node:http2 stream. Null when
// this version of grpc-js is shaped otherwise (then the copy stays until the connection closes).
function http2StreamOf(call: WritableCall): Resettable | null {
  let link = (call as { call?: unknown }).call;
  for (let depth = 0; depth < 8 && typeof link === "object" && link !== null; depth++) {
    const stream = (link as { stream?: Partial<Resettable> & { destroyed?: boolean } }).stream;
    if (stream && typeof stream.close === "function") return stream.destroyed ? null : (stream as Resettable);
    link = (link as { nextCall?: unknown }).nextCall;
  }
  return null;
}
