import type { IncomingMessage, ServerResponse } from "node:http";
import type { TaskPlansClient } from "@taskplans/client";
import { Metadata, status } from "@grpc/grpc-js";

/**
 * The MCP authorization spec's discovery for the HTTP endpoint, on when the operator names the
 * authorization servers the plan service trusts (--auth-servers, PLAN_MCP_AUTH_SERVERS): RFC 9728
 * protected-resource metadata at /.well-known/oauth-protected-resource (and the same with /mcp after
 * it, RFC 9728 section 3.1), and a 401 with `WWW-Authenticate: Bearer resource_metadata="..."` for a
 * request without a bearer token, or with one the plan service refuses (`error="invalid_token"`),
 * so that a client can find where to sign in.
 */
export interface AuthDiscovery {
  /** Issuer URLs of the authorization servers (RFC 8414), in the metadata's authorization_servers. */
  readonly authorizationServers: readonly string[];
  /** The endpoint's public URL (the `resource`); default: scheme, Host header and /mcp. */
  readonly resourceUrl?: string | undefined;
}

/** The well-known path of RFC 9728. */
export const METADATA_PATH = "/.well-known/oauth-protected-resource";

/** The resource a request addresses: the configured URL, or what the client used to reach /mcp. */
export function resourceUrlOf(
  discovery: AuthDiscovery,
  req: IncomingMessage,
  scheme: "http" | "https",
): string {
  return discovery.resourceUrl ?? `${scheme}://${req.headers.host ?? ""}/mcp`;
}

/** Where the metadata of `resource` is (RFC 9728 section 3.1: the well-known path before its path). */
export function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  return `${url.origin}${METADATA_PATH}${path}`;
}

/** Answers GET of the metadata (both well-known paths); true when `path` was one of them. */
export function serveMetadata(
  discovery: AuthDiscovery,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  scheme: "http" | "https",
): boolean {
  const resource = resourceUrlOf(discovery, req, scheme);
  if (path !== METADATA_PATH && path !== new URL(metadataUrlOf(resource)).pathname) return false;
  if (req.method !== "GET") return (void res.writeHead(405, { allow: "GET" }).end(), true);
  const body = {
    resource,
    authorization_servers: discovery.authorizationServers,
    bearer_methods_supported: ["header"],
    resource_name: "taskplans MCP server",
  };
  res
    .writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300" })
    .end(JSON.stringify(body));
  return true;
}

/** A 401 challenge naming the metadata (RFC 6750 section 3, RFC 9728 section 5.1). */
export function challenge(res: ServerResponse, resource: string, invalidToken: boolean): void {
  const params = [
    ...(invalidToken
      ? ['error="invalid_token"', 'error_description="The plan service refused the token"']
      : []),
    `resource_metadata="${metadataUrlOf(resource)}"`,
  ];
  const body = JSON.stringify({
    jsonrpc: "2.0",
    error: {
      code: -32001,
      message: invalidToken ? "The bearer token was refused" : "Authentication required",
    },
    id: null,
  });
  res
    .writeHead(401, { "content-type": "application/json", "www-authenticate": `Bearer ${params.join(", ")}` })
    .end(body);
}

const VERIFIED_FOR_MS = 30_000;
const MAX_VERIFIED = 1_000;

/**
 * Whether the plan service accepts `token`: one cheap authenticated read (ListTasks, one task),
 * remembered for 30 s (at most 1,000 tokens). Only UNAUTHENTICATED refuses it: when the service
 * cannot answer, the request goes on and its tools say so, as without discovery.
 */
export function tokenVerifier(client: TaskPlansClient): (token: string) => Promise<boolean> {
  const verified = new Map<string, number>();
  return async (token) => {
    const until = verified.get(token);
    if (until !== undefined && until > Date.now()) return true;
    verified.delete(token);
    const metadata = new Metadata();
    try {
      metadata.set("authorization", `Bearer ${token}`);
    } catch {
      return false; // no header can carry it
    }
    try {
      await client.tasks.listTasks({ pageSize: 1 }, { metadata, timeoutMs: 10_000 });
    } catch (error) {
      if ((error as { code?: number }).code === status.UNAUTHENTICATED) return false;
      return true;
    }
    if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value ?? "");
    verified.set(token, Date.now() + VERIFIED_FOR_MS);
    return true;
  };
}
