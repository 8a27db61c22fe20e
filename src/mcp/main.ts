#!/usr/bin/env node
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { startMcpHttpServer } from "./http-server";
import { createPlanMcpServer } from "./mcp-server";
import { connectPlanService } from "./plan-gateway";
import { guardRequests } from "./request-guard";

/**
 * `taskplans-mcp [--target host:port] [--task-id ID] [--http PORT [--host H] [--allowed-hosts
 * h:p,...] [--allowed-origins http://h:p,...]]`: the plan tools for agents, over stdio (default) or
 * Streamable HTTP. Env: PLAN_MCP_TARGET, PLAN_MCP_TASK_ID, PLAN_MCP_TOKEN (stdio only: HTTP callers
 * send their own bearer token), PLAN_MCP_ALLOWED_HOSTS, PLAN_MCP_ALLOWED_ORIGINS (default: the
 * loopback names of the bound port). stdout is the protocol channel, so diagnostics go to stderr.
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
    },
  });
  const client = connectPlanService(values.target ?? process.env.PLAN_MCP_TARGET ?? "127.0.0.1:50051");
  const taskId = values["task-id"] ?? process.env.PLAN_MCP_TASK_ID;
  if (values.http !== undefined) {
    const list = (value: string | undefined) =>
      value
        ?.split(",")
        .map((item) => item.trim())
        .filter(Boolean);
    const server = await startMcpHttpServer({
      client,
      taskId,
      host: values.host ?? "127.0.0.1",
      port: Number(values.http),
      allowedHosts: list(values["allowed-hosts"] ?? process.env.PLAN_MCP_ALLOWED_HOSTS),
      allowedOrigins: list(values["allowed-origins"] ?? process.env.PLAN_MCP_ALLOWED_ORIGINS),
    });
    process.stderr.write(
      `taskplans MCP over Streamable HTTP on port ${server.port} at /mcp; allowed hosts: ${server.allow.hosts.join(", ")}\n`,
    );
    const stop = () => void server.close().then(() => process.exit(0));
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    return;
  }
  const server = createPlanMcpServer({ client, token: process.env.PLAN_MCP_TOKEN, taskId });
  await server.connect(guardRequests(new StdioServerTransport()));
}

main().catch((error: unknown) => {
  process.stderr.write(`taskplans-mcp failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
