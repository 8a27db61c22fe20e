import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Reads a POST body of at most `maxBytes` and parses it as JSON. Past the limit it answers 413 (and
 * stops reading); a body that is not JSON gets 400 with JSON-RPC -32700, as the MCP SDK's transport
 * answers both. Resolves the parsed body, or `undefined` when it answered.
 */
export function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
): Promise<{ body: unknown } | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      // The rest is read and dropped (never kept), so that the 413 reaches the client before the
      // connection closes; the server's request timeout bounds how long that may take.
      req.off("data", onData);
      req.resume();
      answer(res, 413, -32000, `Request body too large: more than ${maxBytes} bytes`);
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("error", reject);
    req.once("end", () => {
      if (size > maxBytes) return;
      try {
        resolve({ body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown });
      } catch {
        answer(res, 400, -32700, "Parse error: Invalid JSON");
        resolve(undefined);
      }
    });
  });
}

/** A JSON-RPC error answer with no id, as the transport gives for a request it cannot take. */
export function answer(res: ServerResponse, statusCode: number, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });
  res.writeHead(statusCode, { "content-type": "application/json", connection: "close" }).end(body);
}
