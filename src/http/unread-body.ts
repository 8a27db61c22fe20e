import type { IncomingMessage, ServerResponse } from "node:http";

// What the HTTP door does with a request body its answer did not need to the end (a refusal or an
// error answered while the client was still sending: an envelope over the limit, a client stream's
// error, a Content-Length over the limit). node:http drops such a body itself only when nothing
// began reading it; once something read part of it the rest stays unread, the connection's next
// request is never parsed, and a client that reuses the connection waits until the keep-alive
// timeout resets it (about 1% of connectconformance's cases did). Closing the connection after an
// answer sent as keep-alive races the client's reuse of it; closing it with bytes unread sends a
// reset at once, which discards the answer the client has not read yet. So (as Go's net/http):
// - before its answer is written, the rest of the body is read and dropped, up to the body limit
//   (what a request may make the door read anyway) and for up to DRAIN_MAX_MS: a body that ends
//   there keeps its connection;
// - one that does not is answered with `Connection: close`, and the connection is closed by its FIN
//   first, what still arrives being dropped for LINGER_MS, then reset.

/** How long the rest of a body may take to arrive before its answer, which then closes the connection. */
export const DRAIN_MAX_MS = 1_000;
/** How long a connection closed with a body unread goes on reading after its FIN (Go's net/http: 500 ms). */
export const LINGER_MS = 500;

/**
 * Before an answer is written: reads and drops what is left of the request's body, bounded by
 * `maxBytes` and DRAIN_MAX_MS, then closes the connection after the answer if the body has still
 * not ended (closeIfUnread). A body declared longer than the bound is not waited for.
 */
export async function settleUnread(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
): Promise<void> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (!req.complete && !req.destroyed && !(declared > maxBytes)) await dropRest(req, maxBytes);
  closeIfUnread(req, res);
}

/**
 * After an answer sent before the request's body was read to its end, the connection is closed
 * (`Connection: close`), lingering: its FIN first, then what still arrives is read and dropped for
 * LINGER_MS, so that the client reads the answer before the reset.
 */
export function closeIfUnread(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete) return;
  res.shouldKeepAlive = false;
  const socket = req.socket;
  // node:http ends an answer with `Connection: close` by destroySoon: its FIN, then the socket
  // destroyed as soon as it is written, with the body's bytes unread.
  socket.destroySoon = () => {
    if (!req.destroyed) req.resume();
    socket.resume();
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}

/** Reads and drops the rest of a body; resolves when it ended, went over `maxBytes`, or after DRAIN_MAX_MS. */
function dropRest(req: IncomingMessage, maxBytes: number): Promise<void> {
  return new Promise((resolve) => {
    let left = maxBytes;
    const settle = () => {
      clearTimeout(timer);
      req.off("data", drop).off("end", settle).off("close", settle);
      resolve();
    };
    const drop = (chunk: Buffer) => {
      left -= chunk.byteLength;
      if (left < 0) settle();
    };
    const timer = setTimeout(settle, DRAIN_MAX_MS);
    req.on("data", drop).once("end", settle).once("close", settle);
    req.resume();
    // The parser stops the socket when the request stops reading; the request's own read restarts
    // it only while the request still holds its socket.
    req.socket.resume();
  });
}
