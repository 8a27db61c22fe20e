import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RestoreStatus } from "@taskplans/client";
import type { PlanGateway } from "../plan-gateway";
import { acknowledge, type TaskRun } from "../tool-results";
import { texts } from "../tool-texts";

const version = z.number().int().nonnegative();

/** Registers restore_task_plan_revision and delete_task_plan: the writes that go back or remove (the revisions stay). */
export function registerHistoryTools(server: McpServer, plans: PlanGateway, withTask: TaskRun): void {
  const c = texts.common;
  server.registerTool(
    "restore_task_plan_revision",
    {
      description: texts.restoreRevision.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        revision_id: z.string().describe(c.revisionId),
        expected_version: version.optional().describe(texts.common.versionRequired),
        expected_revision_version: z.string().optional().describe(c.expectedRevisionVersion),
        request_id: z.string().optional().describe(c.requestId),
      },
    },
    (args) =>
      withTask("write", args.task_id, async (taskId) => {
        const restored = await plans.restoreRevision({
          taskId,
          revisionId: args.revision_id,
          expectedVersion: args.expected_version,
          expectedRevisionVersion: args.expected_revision_version ?? "",
          requestId: args.request_id,
        });
        if (restored.status === RestoreStatus.RESTORE_STATUS_ALREADY_CURRENT) {
          return acknowledge("already current (nothing written)", restored.plan);
        }
        return acknowledge(
          "restored",
          restored.plan,
          `The replaced content is in plan revision ${restored.priorRevisionNumber}.`,
        );
      }),
  );

  server.registerTool(
    "delete_task_plan",
    {
      description: texts.deletePlan.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        expected_version: version.optional().describe(texts.deletePlan.expectedVersion),
      },
    },
    (args) =>
      withTask("write", args.task_id, async (taskId) => {
        await plans.deletePlan({ taskId, expectedVersion: args.expected_version });
        return {
          content: [
            { type: "text", text: `Plan deleted successfully: task_id=${taskId}. Its revisions are kept.` },
          ],
        };
      }),
  );
}
