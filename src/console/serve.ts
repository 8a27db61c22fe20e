import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { join } from "node:path";
import { CONSOLE_FILES, consoleAssetsDir } from "./console-files";
import { CSP_REPORT_PATH, SECURITY_HEADERS } from "./csp";
import type { CspReportIntake } from "./csp-report-intake";

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

/** Largest CSP report body read; a larger one is refused (413) without being read whole. */
export const CSP_REPORT_MAX_BYTES = 16 * 1024;

function isConsolePath(path: string): boolean {
  return path === "/console" || path.startsWith("/console/");
}

function send(res: Response, status: number, headers: Record<string, string>, body?: Buffer | string): void {
  if (res.headersSent) return;
  (res as ServerResponse).writeHead(status, { ...SECURITY_HEADERS, ...headers });
  if (body === undefined) res.end();
  else res.end(body);
}

function sendText(res: Response, status: number, text: string, headers: Record<string, string> = {}): void {
  send(res, status, { "content-type": "text/plain; charset=utf-8", ...headers }, `${text}\n`);
}

async function serveFile(req: Request, res: Response, path: string, dir: string): Promise<void> {
  const file = CONSOLE_FILES.get(path);
  if (!file) return sendText(res, 404, "not found");
  let body: Buffer;
  try {
    body = await readFile(join(dir, file.name));
  } catch {
    // Built by `npm run build`; a server started from source without it says so.
    return sendText(res, 503, "the console is not built: run 'npm run build'");
  }
  const headers = { "content-type": file.contentType, "content-length": String(body.length) };
  send(res, 200, headers, req.method === "HEAD" ? undefined : body);
}

// Answers without reading the rest of the body, then closes the connection.
function answerAndClose(req: Request, res: Response, status: number, text: string, headers = {}): void {
  if (res.headersSent) return;
  res.once("finish", () => req.destroy());
  sendText(res, status, text, headers);
}

async function receiveReport(req: Request, res: Response, intake: CspReportIntake): Promise<void> {
  req.on("error", () => undefined);
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > CSP_REPORT_MAX_BYTES) {
    intake.tooLarge();
    return answerAndClose(req, res, 413, "report too large");
  }
  const admission = await intake.admit(req.socket.remoteAddress ?? "", req.headers.authorization);
  if (!admission.admitted) {
    const seconds = String(Math.ceil(admission.retryAfterMs / 1000));
    return answerAndClose(req, res, 429, "too many reports", { "retry-after": seconds });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > CSP_REPORT_MAX_BYTES) {
      if (!res.headersSent) {
        intake.tooLarge();
        answerAndClose(req, res, 413, "report too large");
      }
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (size > CSP_REPORT_MAX_BYTES) return;
    intake.accept(Buffer.concat(chunks).toString("utf8"), admission.authenticated);
    send(res, 204, {});
  });
}

/**
 * Serves the plan console (docs/console.md) for the HTTP listener: every request whose path is
 * `/console` or under it is answered here and true is returned; any other path is left to the caller
 * (false). GET and HEAD read the page's files (CONSOLE_FILES, nothing else), POST to CSP_REPORT_PATH
 * hands a violation report to `reports` (csp-report-intake.ts: rate limits, auth, a bounded log;
 * 413 past CSP_REPORT_MAX_BYTES, 429 past a limit, else 204); every answer carries the strict CSP
 * and nosniff (csp.ts).
 */
export function handleConsoleRequest(
  req: Request,
  res: Response,
  reports: CspReportIntake,
  dir: string = consoleAssetsDir(),
): boolean {
  const path = (req.url ?? "").split("?")[0] ?? "";
  if (!isConsolePath(path)) return false;
  if (path === CSP_REPORT_PATH) {
    if (req.method === "POST")
      receiveReport(req, res, reports).catch(() => sendText(res, 500, "internal error"));
    else sendText(res, 405, "method not allowed", { allow: "POST" });
    return true;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    sendText(res, 405, "method not allowed", { allow: "GET, HEAD" });
    return true;
  }
  void serveFile(req, res, path, dir);
  return true;
}
