import type * as http from "node:http";
import type * as http2 from "node:http2";

/**
 * The plan console's requests (`/console` and everything under `/console/`), handed over by the HTTP
 * listener (src/http/). Returns true when it answered the request. Until the console is built, every
 * such path answers 404.
 */
export function handleConsoleRequest(
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
): boolean {
  void req;
  res.statusCode = 404;
  res.setHeader("content-type", "text/plain; charset=utf-8");
  res.end("not found\n");
  return true;
}
