import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { ProbeOptions, ProbeResult } from "../grpc/health/release-probe";

const DOMAIN = "taskplans";
// The service's own answers to a read of a task id nobody uses (release-probe.ts READ_ANSWERS).
const READ_ANSWERS = new Set(["not_found", "permission_denied"]);

interface ErrorBody {
  code?: string;
  message?: string;
  details?: { type?: string; debug?: { reason?: string; domain?: string } }[];
}

/**
 * The HTTP listener's half of a release check: one plan read as a Connect GET (the request as JSON in
 * the URL, with the same bearer token and TLS as the gRPC probe) must be answered by the service
 * itself: 200, or a JSON error NOT_FOUND / PERMISSION_DENIED whose ErrorInfo is the service's.
 */
export function probeHttp(target: string, options: ProbeOptions): Promise<ProbeResult> {
  const message = encodeURIComponent(JSON.stringify({ taskId: `release-probe-${Date.now()}` }));
  const path = `/taskplans.v1.PlanService/GetPlan?connect=v1&encoding=json&message=${message}`;
  const [host = "", port = ""] = [
    target.slice(0, target.lastIndexOf(":")),
    target.slice(target.lastIndexOf(":") + 1),
  ];
  const { tls } = options;
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const common = { host, port: Number(port), path, method: "GET", headers, timeout: options.timeoutMs };
  return new Promise((resolve) => {
    const answered = (response: import("node:http").IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve(judge(target, response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"))),
      );
      response.on("error", (error) => resolve({ ok: false, summary: `${target}: ${error.message}` }));
    };
    const request = tls
      ? httpsRequest(
          {
            ...common,
            ca: tls.ca,
            ...(tls.clientCert ? { cert: tls.clientCert.cert, key: tls.clientCert.key } : {}),
            ...(tls.serverName ? { servername: tls.serverName } : {}),
          },
          answered,
        )
      : httpRequest(common, answered);
    request.on("timeout", () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    request.on("error", (error) => resolve({ ok: false, summary: `${target} (HTTP): ${error.message}` }));
    request.end();
  });
}

function judge(target: string, status: number, text: string): ProbeResult {
  if (status === 200)
    return { ok: true, summary: `${target}: a plan read over HTTP (Connect GET) answered OK` };
  let body: ErrorBody;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    return {
      ok: false,
      summary: `${target}: a plan read over HTTP got ${status} without a Connect error body`,
    };
  }
  const info = body.details?.find((d) => d.type === "google.rpc.ErrorInfo")?.debug;
  // Without ErrorInfo no RPC ran: the listener's edge refused it (a Host it does not answer, for
  // one: docs/http.md, "Host and Origin"), and its message says which setting to change.
  const what = info
    ? `${body.code ?? status} ${info.reason ?? ""}`
    : `${body.code ?? status} (no ErrorInfo)${body.message ? `: ${body.message.slice(0, 300)}` : ""}`;
  return READ_ANSWERS.has(body.code ?? "") && info?.domain === DOMAIN
    ? { ok: true, summary: `${target}: a plan read over HTTP (Connect GET) answered ${what}` }
    : { ok: false, summary: `${target}: a plan read over HTTP failed with ${what}` };
}
