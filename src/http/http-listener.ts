import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Registry } from "@bufbuild/protobuf";
import { cors as connectCors } from "@connectrpc/connect";
import cors from "cors";
import type { CspReportIntake } from "../console/csp-report-intake";
import { handleConsoleRequest } from "../console/serve";
import { ListenError, type TlsSource } from "@taskplans/tls";
import type { HttpLimitsConfig } from "../config/config";
import { connectHandler } from "./connect-handler";
import type { EdgeGuard } from "./edge-guard";
import type { DoorService } from "./connect-routes";
import type { Logger } from "pino";

// Connect's JSON serialization takes its text decoder from the JSON options (not in their type).
const STRICT_UTF8 = { textDecoder: new TextDecoder("utf-8", { fatal: true }) } as object;

/**
 * The protocols and settings the door's router and direct paths serve with (connect-handler.ts):
 * Connect and gRPC-Web, not gRPC (the gRPC port's); the body limit; strict JSON. The conformance
 * server (test/conformance/server.ts) mounts its service with the same, and the registry its
 * messages' google.protobuf.Any fields need in JSON (the door's messages have none).
 */
export function doorProtocols(readMaxBytes: number, types?: Registry) {
  return {
    grpc: false,
    grpcWeb: true,
    connect: true,
    readMaxBytes,
    // An unknown field is refused INVALID_ARGUMENT naming it; so is a body that is not UTF-8 (a
    // lenient decoder would store U+FFFD where the gRPC port refuses INVALID_UTF8).
    jsonOptions: { ignoreUnknownFields: false, ...STRICT_UTF8, ...(types ? { registry: types } : {}) },
  };
}

/** What the HTTP listener needs: the routes, and its settings (docs/configuration.md). */
export interface HttpListenerOptions {
  /** PLAN_HTTP_ADDRESS: host:port (port 0 picks a free one). */
  readonly address: string;
  /** The gRPC port's services, served with their handlers (connect-routes.ts). */
  readonly services: readonly DoorService[];
  /** Largest request body: refused RESOURCE_EXHAUSTED by its Content-Length before it is read, or as soon as more arrives. */
  readonly readMaxBytes: number;
  /** PLAN_HTTP_CORS_ORIGINS: browser origins allowed to call (exact matches); empty: CORS off. */
  readonly corsOrigins: readonly string[];
  /** PLAN_HTTP_MAX_CONNECTIONS, PLAN_HTTP_HEADERS_TIMEOUT_MS, PLAN_HTTP_BODY_TIMEOUT_MS. */
  readonly limits: HttpLimitsConfig;
  readonly logger: Logger;
  /** The gRPC port's TLS (PLAN_GRPC_TLS_*): HTTPS with the same certificate, client CA and reloads. */
  readonly tls: TlsSource | null;
  /** The Host and Origin rules every request passes first (edge-guard.ts; PLAN_HTTP_ALLOWED_HOSTS). */
  readonly edge: EdgeGuard;
  /** Where the console's CSP reports go (rate limits, auth, a bounded log: csp-report-intake.ts). */
  readonly cspReports: CspReportIntake;
}

export interface HttpListener {
  readonly port: number;
  /** Stops accepting, lets calls in flight finish for up to `drainMs`, then closes every connection. */
  close(drainMs: number): Promise<void>;
}

/**
 * The HTTP door (docs/http.md): TaskService and PlanService over the Connect protocol (JSON and
 * binary, GET for the reads, server streaming for WatchPlan) and gRPC-Web, on HTTP/1.1 (HTTPS with the
 * gRPC port's TLS); the plan console under /console (src/console/serve.ts). The gRPC protocol itself
 * stays on the gRPC port (grpc-js). CORS answers only the listed origins, never with a wildcard.
 */
export async function startHttpListener(options: HttpListenerOptions): Promise<HttpListener> {
  const connect = connectHandler({
    logger: options.logger,
    services: options.services,
    ...doorProtocols(options.readMaxBytes),
  });
  const allowCors =
    options.corsOrigins.length > 0
      ? cors({
          origin: [...options.corsOrigins],
          methods: [...connectCors.allowedMethods],
          allowedHeaders: [...connectCors.allowedHeaders, "authorization", "x-request-id", "traceparent"],
          exposedHeaders: [...connectCors.exposedHeaders, "x-request-id"],
          // Tokens travel in the authorization header, never in cookies: no credentialed requests.
          credentials: false,
          maxAge: 7200,
        })
      : null;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    // Before anything reads the request: a Host not allowed or a cross-origin write is refused here.
    if (!options.edge.admit(req, res)) return;
    if (handleConsoleRequest(req, res, options.cspReports)) return;
    if (!allowCors) return void connect(req, res);
    allowCors(req, res, () => connect(req, res));
  };
  const server: Server = options.tls
    ? httpsServer(options.tls, options.limits, serve)
    : createHttpServer(serverOptions(options.limits), serve);
  limit(server, options.limits);
  const separator = options.address.lastIndexOf(":");
  const host = options.address.slice(0, separator).replace(/^\[|\]$/g, "");
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(new ListenError("PLAN_HTTP_ADDRESS", options.address, error)));
    server.listen(Number(options.address.slice(separator + 1)), host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: (drainMs) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), drainMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

// node:http checks its request timeouts on this interval (its default, 30 s, would let a slow body
// run up to 30 s past its timeout).
const TIMEOUT_CHECK_MS = 1_000;

/**
 * What a client can hold on the door (docs/http.md "Limits"): a request must arrive whole (headers
 * and body) within the body timeout and its headers within theirs, else node:http answers 408 and
 * closes the connection (the default would let a slow body keep its connection and its buffered
 * bytes for 300 s); a response being written (a WatchPlan stream) is not bounded by them.
 */
function serverOptions(limits: HttpLimitsConfig) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.bodyTimeoutMs,
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, limits.headersTimeoutMs),
  };
}

// Past PLAN_HTTP_MAX_CONNECTIONS node:http closes a new connection as soon as it accepts it, before
// reading a byte: the client sees a reset, the connections being served keep theirs.
function limit(server: Server, limits: HttpLimitsConfig): void {
  server.maxConnections = limits.maxConnections;
}

// HTTPS whose certificate follows the gRPC port's source; with a client CA, clients must present a
// certificate it signed (mTLS), as on the gRPC port.
function httpsServer(
  tls: TlsSource,
  limits: HttpLimitsConfig,
  serve: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  const contextOf = (material: ReturnType<TlsSource["current"]>) => ({
    cert: material.cert,
    key: material.key,
    ...(material.clientCa ? { ca: material.clientCa } : {}),
  });
  const mutual = tls.current().clientCa !== null;
  const server = createHttpsServer(
    {
      ...contextOf(tls.current()),
      requestCert: mutual,
      rejectUnauthorized: mutual,
      ...serverOptions(limits),
    },
    serve,
  );
  const unsubscribe = tls.onChange((material) => server.setSecureContext(contextOf(material)));
  server.once("close", unsubscribe);
  return server;
}
