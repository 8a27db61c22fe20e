import type { IncomingMessage } from "node:http";
import { createAsyncIterable, readAllBytes } from "@connectrpc/connect/protocol";

// What the HTTP door's direct paths (connect-unary.ts, connect-stream.ts) read of a node:http request.

/**
 * The request's body, checked as Connect's readAllBytes checks it (its size limit, first by
 * Content-Length before anything is read), over chunks gathered from the stream's events rather
 * than its async iterator (about 10 µs per call). Reading stops once the body is over the limit; a
 * body over it, or not of its promised length, goes through readAllBytes for its refusal.
 */
export async function bodyOf(req: IncomingMessage, readMaxBytes: number): Promise<Uint8Array> {
  const length = single(req.headers["content-length"]);
  if (length !== null && Number(length) > readMaxBytes)
    return readAllBytes(createAsyncIterable([]), readMaxBytes, length);
  const { chunks, count } = await new Promise<{ chunks: Buffer[]; count: number }>((resolve, reject) => {
    const gathered = { chunks: [] as Buffer[], count: 0 };
    const settle = () => {
      req.off("data", take).off("end", settle).off("error", reject);
      resolve(gathered);
    };
    const take = (chunk: Buffer) => {
      gathered.chunks.push(chunk);
      gathered.count += chunk.byteLength;
      if (gathered.count > readMaxBytes) settle();
    };
    req.on("data", take).once("end", settle).once("error", reject);
  });
  // A body within the limit and of its promised length is what readAllBytes would return; any other
  // goes through it, for its refusal.
  if (count <= readMaxBytes && (length === null || Number(length) === count))
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  return readAllBytes(createAsyncIterable(chunks), readMaxBytes, length);
}

/** A header's value as one string (a repeated one joined with ", "), or null when absent. */
export function single(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

// Node joins a repeated header's values with ", " (as fetch's Headers does), except set-cookie.
export function forEachHeader(req: IncomingMessage, visit: (value: string, key: string) => void): void {
  for (const [key, value] of Object.entries(req.headers)) {
    const text = single(value);
    if (text !== null) visit(text, key);
  }
}
