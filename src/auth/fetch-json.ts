import type { IncomingMessage } from "node:http";
import { get } from "node:https";

/** How one document is fetched. */
export interface FetchJsonOptions {
  /** A PEM CA bundle trusted besides the system's. */
  readonly ca: Buffer | null;
  /** When the whole exchange (connect, TLS, headers and every byte of the body) must be over (epoch ms). */
  readonly deadline: number;
}

const MAX_BYTES = 1024 * 1024;

/**
 * A JSON document by HTTPS GET: 200 only, no redirects, at most 1 MiB, all of it before `deadline`
 * (one overall deadline, not an idle timeout: a server trickling bytes fails like a silent one).
 * Settles exactly once however the exchange ends: the body's end, a request or response error, a
 * connection closed or aborted before the body ended, the size cap, or the deadline; on a failure
 * the request is destroyed, so no socket outlives the promise.
 */
export function fetchJson(url: string, options: FetchJsonOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error: Error | null, document?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!error) return resolve(document);
      request.destroy();
      reject(error);
    };
    const fail = (message: string) => () => settle(new Error(`${url} ${message}`));
    const timeoutMs = Math.max(0, options.deadline - Date.now());
    const timer = setTimeout(fail(`did not send its document within ${timeoutMs} ms`), timeoutMs);
    const request = get(
      url,
      { ...(options.ca ? { ca: options.ca } : {}), headers: { accept: "application/json" } },
      (response) => readBody(response),
    );
    request.on("error", (error) => settle(new Error(`${url}: ${error.message}`)));
    request.on("close", fail("closed the connection before answering"));

    function readBody(response: IncomingMessage) {
      response.on("error", (error) => settle(new Error(`${url}: ${error.message}`)));
      response.on("aborted", fail("closed the connection before the body ended"));
      response.on("close", fail("closed the connection before the body ended"));
      if (response.statusCode !== 200) {
        response.resume();
        return settle(new Error(`${url} answered HTTP ${response.statusCode}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BYTES) fail("sent more than 1 MiB")();
        else chunks.push(chunk);
      });
      response.on("end", () => {
        try {
          settle(null, JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } catch {
          settle(new Error(`${url} did not send JSON`));
        }
      });
    }
  });
}
