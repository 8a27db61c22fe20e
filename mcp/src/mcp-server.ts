import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { TaskPlansClient } from "@taskplans/client";
import { planGateway } from "./plan-gateway";
import { registerPlanPrompts } from "./plan-prompts";
import { registerPlanResources } from "./plan-resources";
import { registerPlanSubscriptions } from "./plan-subscriptions";
import { registerPlanTools } from "./plan-tools";
import { acceptArgumentAliases } from "./tool-arguments";

/**
 * An MCP server exposing the plan tools, the plans as resources and (with `subscriptions`, the
 * default) resources/subscribe over the generated gRPC client. Turn subscriptions off where the
 * transport cannot carry a notification after its answer (stateless HTTP: one request, one server).
 * It declares logging: subscriptions report their end as `notifications/message`. Every tool takes
 * the argument names agents already use (tools/argument-aliases.ts) and refuses unknown ones.
 */
export function createPlanMcpServer(options: {
  readonly client: TaskPlansClient;
  readonly token?: string | undefined;
  readonly taskId?: string | undefined;
  readonly subscriptions?: boolean;
}): McpServer {
  const server = new McpServer({ name: "taskplans", version: "0.1.0" }, { capabilities: { logging: {} } });
  const plans = planGateway(options.client, options.token);
  acceptArgumentAliases(server);
  registerPlanTools(server, plans, options.taskId);
  registerPlanResources(server, plans);
  registerPlanPrompts(server, plans, options.taskId);
  if (options.subscriptions !== false) registerPlanSubscriptions(server, plans);
  return server;
}
