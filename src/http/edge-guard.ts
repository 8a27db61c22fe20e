import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { LogWindow, truncated } from "../observability/log-window";
import { type HostAllowList, hostAllowed, hostAllowList, originAllowed } from "./edge-rules";

/** Which rule refused a request. */
export type EdgeRefusal = "host" | "origin";

/** What an EdgeGuard needs: where it stands and what it allows (docs/http.md, "Host and Origin"). */
export interface EdgeGuardOptions {
  /** Named in log lines and the metric: "http" (the door and the console) or "metrics". */
  readonly listener: "http" | "metrics";
  /** The listener's address (host:port): a loopback one answers only loopback names by default. */
  readonly address: string;
  /** PLAN_HTTP_ALLOWED_HOSTS. */
  readonly allowedHosts: readonly string[];
  /** PLAN_HTTP_CORS_ORIGINS: origins that may send unsafe requests besides the same origin. */
  readonly corsOrigins: readonly string[];
  readonly logger: Logger;
  /** Counts a refusal (taskplans_http_edge_refusals_total). */
  readonly onRefused?: (rule: EdgeRefusal) => void;
  /** Log window (default: one minute). */
  readonly logWindowMs?: number;
}

/** The edge rules of one listener, checked before anything else reads the request. */
export interface EdgeGuard {
  /** True when the request may go on; else it has been answered 403 and must not be touched. */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** Writes the pending log summary. */
  close(): void;
}

/** The HTTP status of every edge refusal. */
export const EDGE_REFUSAL_STATUS = 403;

const LOG_FIELD_CHARS = 100;

/**
 * The one place every request of a listener passes first (STYLE.md habit 17): its `Host` must be an
 * allowed name and, for a method other than GET/HEAD/OPTIONS, its `Origin` absent, listed or the
 * same origin (edge-rules.ts). A refused request is answered 403 with a Connect JSON error body
 * (`permission_denied`, a message naming the setting; no ErrorInfo: no RPC ran) and the connection
 * is closed without reading its body; nothing else sees it. Refusals are counted, and logged at most
 * twice a window (the first at once, then a count: log-window.ts), fields cut to 100 characters.
 */
export function edgeGuard(options: EdgeGuardOptions): EdgeGuard {
  const separator = options.address.lastIndexOf(":");
  const allow: HostAllowList = hostAllowList(options.address.slice(0, separator), options.allowedHosts);
  const log = new LogWindow<Record<string, string>>({
    windowMs: options.logWindowMs ?? 60_000,
    first: (fields) => options.logger.warn(fields, "http request refused at the edge"),
    summary: ({ more, byKey, windowMs }) =>
      options.logger.warn(
        { listener: options.listener, refused: more, byRule: byKey, windowMs },
        "more http requests refused at the edge",
      ),
  });
  return {
    admit(req, res) {
      const host = req.headers.host;
      const origin = req.headers.origin;
      let rule: EdgeRefusal | null = null;
      if (!hostAllowed(host, allow)) rule = "host";
      else if (!originAllowed(req.method, origin, host, options.corsOrigins)) rule = "origin";
      if (rule === null) return true;
      options.onRefused?.(rule);
      const field = (value: string | undefined) => truncated(value ?? "", LOG_FIELD_CHARS);
      log.add(rule, {
        listener: options.listener,
        rule,
        host: field(host),
        origin: field(origin),
        method: field(req.method),
        path: field((req.url ?? "").split("?")[0]),
      });
      refuse(
        res,
        rule === "host" ? hostMessage(field(host)) : originMessage(field(origin), field(req.method)),
      );
      return false;
    },
    close: () => log.close(),
  };
}

function hostMessage(host: string): string {
  return `Host ${JSON.stringify(host)} is not a name this listener answers (PLAN_HTTP_ALLOWED_HOSTS lists more; docs/http.md, "Host and Origin"): nothing was read or changed`;
}

function originMessage(origin: string, method: string): string {
  return `Origin ${JSON.stringify(origin)} may not send ${method} requests to this listener: only its own origin or one listed in PLAN_HTTP_CORS_ORIGINS may (docs/http.md, "Host and Origin"); nothing was read or changed`;
}

function refuse(res: ServerResponse, message: string): void {
  const body = JSON.stringify({ code: "permission_denied", message });
  res.writeHead(EDGE_REFUSAL_STATUS, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
    // The body is never read: the connection ends with the answer.
    connection: "close",
  });
  res.end(body);
}
