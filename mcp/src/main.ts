#!/usr/bin/env node
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import pino from "pino";
import { type TlsSource, watchTlsFiles } from "@taskplans/tls";
import type { AuthDiscovery } from "./auth-discovery";
import { startMcpHttpServer } from "./http-server";
import { createPlanMcpServer } from "./mcp-server";
import { connectPlanService } from "./plan-gateway";
import { guardRequests } from "./request-guard";

/**
 * `taskplans-mcp [--target host:port] [--task-id ID] [--http PORT [--host H] [--allowed-hosts
 * h:p,...] [--allowed-origins http://h:p,...] [--auth-servers https://issuer,...]]`: the plan tools,
 * resources and prompts for agents, over stdio (default) or Streamable HTTP. Env: PLAN_MCP_TARGET, PLAN_MCP_TASK_ID, PLAN_MCP_TOKEN (stdio only: HTTP callers
 * send their own bearer token), PLAN_MCP_ALLOWED_HOSTS, PLAN_MCP_ALLOWED_ORIGINS (default: the
 * loopback names of the bound port). TLS: PLAN_MCP_TLS_CERT_FILE and PLAN_MCP_TLS_KEY_FILE serve
 * HTTPS (read again every 10 s, like the service's); PLAN_MCP_TARGET_CA_FILE dials the plan service
 * over TLS (mTLS with PLAN_MCP_TARGET_CERT_FILE and PLAN_MCP_TARGET_KEY_FILE; the certificate's name
 * in PLAN_MCP_TARGET_SERVER_NAME when not the target's host). Auth discovery over HTTP:
 * PLAN_MCP_AUTH_SERVERS (the issuers the plan service trusts) and PLAN_MCP_RESOURCE_URL (the
 * endpoint's public URL, default from the Host header). stdout is the protocol channel, so
 * diagnostics go to stderr.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== "mcp"),
    options: {
      target: { type: "string" },
      "task-id": { type: "string" },
      http: { type: "string" },
      host: { type: "string" },
      "allowed-hosts": { type: "string" },
      "allowed-origins": { type: "string" },
      "auth-servers": { type: "string" },
    },
  });
  const env = (name: string) => process.env[name] || undefined;
  const client = connectPlanService(values.target ?? env("PLAN_MCP_TARGET") ?? "127.0.0.1:50051", {
    tls: env("PLAN_MCP_TARGET_CA_FILE")
      ? {
          caFile: env("PLAN_MCP_TARGET_CA_FILE"),
          certFile: env("PLAN_MCP_TARGET_CERT_FILE"),
          keyFile: env("PLAN_MCP_TARGET_KEY_FILE"),
          serverName: env("PLAN_MCP_TARGET_SERVER_NAME"),
        }
      : undefined,
  });
  const taskId = values["task-id"] ?? process.env.PLAN_MCP_TASK_ID;
  if (values.http !== undefined) {
    const list = (value: string | undefined) =>
      value
        ?.split(",")
        .map((item) => item.trim())
        .filter(Boolean);
    const tls = servingTls(env("PLAN_MCP_TLS_CERT_FILE"), env("PLAN_MCP_TLS_KEY_FILE"));
    const auth = authDiscovery(
      list(values["auth-servers"] ?? process.env.PLAN_MCP_AUTH_SERVERS),
      env("PLAN_MCP_RESOURCE_URL"),
    );
    const server = await startMcpHttpServer({
      client,
      tls,
      auth,
      taskId,
      host: values.host ?? "127.0.0.1",
      port: Number(values.http),
      allowedHosts: list(values["allowed-hosts"] ?? process.env.PLAN_MCP_ALLOWED_HOSTS),
      allowedOrigins: list(values["allowed-origins"] ?? process.env.PLAN_MCP_ALLOWED_ORIGINS),
    });
    process.stderr.write(
      `taskplans MCP over Streamable HTTP${tls ? "S" : ""} on port ${server.port} at /mcp; allowed hosts: ${server.allow.hosts.join(", ")}\n`,
    );
    const stop = () => void server.close().then(() => process.exit(0));
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    return;
  }
  const server = createPlanMcpServer({ client, token: process.env.PLAN_MCP_TOKEN, taskId });
  await server.connect(guardRequests(new StdioServerTransport()));
}

// Auth discovery when authorization servers are named; each URL must be an absolute http(s) URL.
function authDiscovery(servers: string[] | undefined, resourceUrl: string | undefined): AuthDiscovery | null {
  const check = (url: string, setting: string) => {
    const protocol = URL.canParse(url) ? new URL(url).protocol : "";
    if (protocol !== "http:" && protocol !== "https:")
      throw new Error(`${setting}: ${JSON.stringify(url)} is not an http(s) URL`);
  };
  for (const server of servers ?? []) check(server, "--auth-servers/PLAN_MCP_AUTH_SERVERS");
  if (resourceUrl !== undefined) check(resourceUrl, "PLAN_MCP_RESOURCE_URL");
  if (!servers?.length) {
    if (resourceUrl !== undefined) throw new Error("PLAN_MCP_RESOURCE_URL needs PLAN_MCP_AUTH_SERVERS");
    return null;
  }
  return { authorizationServers: servers, resourceUrl };
}

// The HTTPS certificate, reloaded like the service's; problems with it are logged as JSON on stderr.
function servingTls(cert: string | undefined, key: string | undefined): TlsSource | null {
  if ((cert === undefined) !== (key === undefined))
    throw new Error("set both PLAN_MCP_TLS_CERT_FILE and PLAN_MCP_TLS_KEY_FILE, or neither");
  if (cert === undefined || key === undefined) return null;
  const files = {
    certFile: { path: cert, setting: "PLAN_MCP_TLS_CERT_FILE" },
    keyFile: { path: key, setting: "PLAN_MCP_TLS_KEY_FILE" },
    clientCaFile: null,
  };
  return watchTlsFiles(
    files,
    10_000,
    pino(
      { level: "info", base: { service: "taskplans-mcp" }, timestamp: pino.stdTimeFunctions.isoTime },
      pino.destination(2),
    ),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`taskplans-mcp failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
