import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { TaskPlansClient } from "@taskplans/client";
import { planGateway } from "./plan-gateway";
import { registerPlanResources } from "./plan-resources";
import { registerPlanTools } from "./plan-tools";

/** An MCP server exposing the plan tools over the generated gRPC client. */
export function createPlanMcpServer(options: {
  readonly client: TaskPlansClient;
  readonly token?: string | undefined;
  readonly taskId?: string | undefined;
}): McpServer {
  const server = new McpServer({ name: "taskplans", version: "0.1.0" });
  const plans = planGateway(options.client, options.token);
  registerPlanTools(server, plans, options.taskId);
  registerPlanResources(server, plans);
  return server;
}
