import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { PlanGateway } from "./plan-gateway";
import { registerChangesTool } from "./tools/changes-tool";
import { registerHistoryTools } from "./tools/history-tools";
import { registerPlanReadTool, registerRevisionTools } from "./tools/read-tools";
import { taskRunner } from "./tools/task-runner";
import { registerWriteTools } from "./tools/write-tools";

/**
 * Registers the plan tools, one group per module of tools/, in the order tools/list shows them:
 * the plan, its writes, what changed, its history, and going back.
 */
export function registerPlanTools(
  server: McpServer,
  plans: PlanGateway,
  defaultTaskId: string | undefined,
): void {
  const withTask = taskRunner(plans, defaultTaskId);
  registerPlanReadTool(server, plans, withTask);
  registerWriteTools(server, plans, withTask);
  registerChangesTool(server, plans, withTask);
  registerRevisionTools(server, plans, withTask);
  registerHistoryTools(server, plans, withTask);
}
