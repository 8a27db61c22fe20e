import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { TaskPlansClient } from "@taskplans/client";
import { type AuthDiscovery, challenge, resourceUrlOf, serveMetadata, tokenVerifier } from "./auth-discovery";
import { McpHttpSessions } from "./http-sessions";
import { readJsonBody } from "./request-body";
import { httpsServer, ListenError, type TlsSource } from "@taskplans/tls";
import { createPlanMcpServer } from "./mcp-server";
import { guardRequests } from "./request-guard";

/** Largest request body accepted (a 256 KiB plan JSON-escaped, with room to spare); larger: 413. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** Who may call the HTTP endpoint from a browser: Host and Origin values that are accepted. */
export interface HttpAllowList {
  readonly hosts: readonly string[];
  readonly origins: readonly string[];
}

/**
 * The default allow-list: the loopback names of the bound port (127.0.0.1, localhost, [::1]).
 * A web page on another name cannot reach the tools through DNS rebinding; serving other names
 * (a proxy, a remote host) needs them listed (--allowed-hosts, --allowed-origins).
 */
export function loopbackAllowList(port: number, scheme: "http" | "https" = "http"): HttpAllowList {
  const hosts = ["127.0.0.1", "localhost", "[::1]"].map((name) => `${name}:${port}`);
  return { hosts, origins: hosts.map((host) => `${scheme}://${host}`) };
}

/**
 * MCP over Streamable HTTP at /mcp. An initialize opens a session (http-sessions.ts: an MCP server
 * bound to the caller's bearer token, kept across requests, with resources/subscribe whose
 * notifications go on the session's GET stream); a request without a session is served alone, as
 * before sessions existed, by a server of its own. The token is forwarded to the plan service as
 * call credentials. The body is read here (413 past MAX_BODY_BYTES, 400 when it is not JSON); the
 * MCP SDK checks Host and Origin against the allow-list (403 otherwise; a request without Origin,
 * such as a non-browser client, passes the Origin check).
 * Rejects with a ListenError naming --http/--host when the address cannot be listened on.
 */
export async function startMcpHttpServer(options: {
  readonly client: TaskPlansClient;
  readonly taskId?: string | undefined;
  readonly host: string;
  readonly port: number;
  /** Accepted Host values; default: loopbackAllowList(bound port).hosts. */
  readonly allowedHosts?: readonly string[] | undefined;
  /** Accepted Origin values; default: loopbackAllowList(bound port).origins. */
  readonly allowedOrigins?: readonly string[] | undefined;
  /** Serve HTTPS with this certificate (it follows rotations); null or absent: HTTP. */
  readonly tls?: TlsSource | null;
  /** Auth discovery (RFC 9728 metadata, 401 challenges); null or absent: requests need no token here. */
  readonly auth?: AuthDiscovery | null;
  /** Bounds of the HTTP sessions; default MAX_SESSIONS and SESSION_IDLE_MS. */
  readonly sessions?: { readonly max?: number; readonly idleMs?: number };
}): Promise<{ port: number; allow: HttpAllowList; sessions(): number; close(): Promise<void> }> {
  let allow: HttpAllowList = { hosts: [], origins: [] }; // set once the port is bound
  const transportOptions = () => ({
    enableJsonResponse: true,
    enableDnsRebindingProtection: true,
    allowedHosts: [...allow.hosts],
    allowedOrigins: [...allow.origins],
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  const open = (token: string | undefined, subscriptions: boolean) =>
    createPlanMcpServer({ client: options.client, token, taskId: options.taskId, subscriptions });
  const sessions = new McpHttpSessions(
    (token) => open(token, true),
    transportOptions,
    options.sessions?.idleMs,
    options.sessions?.max,
  );
  // One request, one server, no session: what a client that never initializes (or finds the
  // sessions full) gets. It cannot carry a notification after its answer, so it offers no subscribe.
  const stateless = async (
    req: IncomingMessage,
    res: ServerResponse,
    token: string | undefined,
    body: unknown,
  ) => {
    const server = open(token, false);
    const transport = new StreamableHTTPServerTransport({
      ...transportOptions(),
      sessionIdGenerator: undefined,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(guardRequests(transport));
    await transport.handleRequest(req, res, body);
  };
  const scheme = options.tls ? "https" : "http";
  const auth = options.auth ?? null;
  const verify = tokenVerifier(options.client);
  const serve: RequestListener = (req, res) => {
    const path = req.url?.split("?")[0] ?? "";
    // With discovery on, URLs are built from Host: only the allowed names get them.
    if (auth && !allow.hosts.includes(req.headers.host ?? "")) return void res.writeHead(403).end();
    if (auth && serveMetadata(auth, req, res, path, scheme)) return;
    if (path !== "/mcp") return void res.writeHead(404).end();
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const failed = () => {
      if (!res.headersSent) res.writeHead(500).end();
    };
    if (auth) {
      const resource = resourceUrlOf(auth, req, scheme);
      if (!token) return challenge(res, resource, false);
      return void verify(token)
        .then((accepted) => (accepted ? route(req, res, token) : challenge(res, resource, true)))
        .catch(failed);
    }
    route(req, res, token);
  };
  const route = (req: IncomingMessage, res: ServerResponse, token: string | undefined) => {
    const failed = () => {
      if (!res.headersSent) res.writeHead(500).end();
    };
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") return void sessions.serve(sessionId, token, req, res).catch(failed);
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    void (async () => {
      const read = await readJsonBody(req, res, MAX_BODY_BYTES);
      if (!read) return;
      if (isInitializeRequest(read.body) && (await sessions.start(token, req, res, read.body))) return;
      await stateless(req, res, token, read.body);
    })().catch(failed);
  };
  const http: Server = options.tls ? httpsServer(options.tls, serve) : createServer(serve);
  await new Promise<void>((resolve, reject) => {
    // Without a listener, a taken port would be an uncaught 'error' event: a crash with a stack.
    const failed = (error: Error) =>
      reject(new ListenError("--http/--host", `${options.host}:${options.port}`, error));
    http.once("error", failed);
    http.listen(options.port, options.host, () => {
      http.off("error", failed);
      resolve();
    });
  });
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const loopback = loopbackAllowList(port, options.tls ? "https" : "http");
  allow = {
    hosts: options.allowedHosts ?? loopback.hosts,
    origins: options.allowedOrigins ?? loopback.origins,
  };
  return {
    port,
    allow,
    sessions: () => sessions.size,
    close: async () => {
      await sessions.closeAll();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
