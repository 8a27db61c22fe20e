import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { PlanGateway } from "../plan-gateway";
import { metadataAndContent, type TaskRun } from "../tool-results";
import { texts } from "../tool-texts";

/** Registers get_task_plan: the plan, whole or a range of it, with its metadata. */
export function registerPlanReadTool(server: McpServer, plans: PlanGateway, withTask: TaskRun): void {
  const c = texts.common;
  server.registerTool(
    "get_task_plan",
    {
      description: texts.getPlan.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        // uint32 on the wire: larger values are refused here, before any call.
        offset: z.number().int().nonnegative().max(0xffffffff).optional().describe(texts.getPlan.offset),
        limit: z.number().int().positive().max(0xffffffff).optional().describe(texts.getPlan.limit),
      },
    },
    (args) =>
      withTask("read", args.task_id, async (taskId) => {
        const read = await plans.getPlan({ taskId, offset: args.offset, limit: args.limit });
        const { content, ...plan } = read.plan ?? { content: "" };
        return metadataAndContent(
          "Plan metadata",
          {
            ...plan,
            total_chars: read.totalChars,
            total_bytes: read.totalBytes,
            has_more: read.hasMore,
            next_offset: read.nextOffset,
          },
          content,
        );
      }),
  );
}

/** Registers list_task_plan_revisions and get_task_plan_revision: the history, page by page, and one revision. */
export function registerRevisionTools(server: McpServer, plans: PlanGateway, withTask: TaskRun): void {
  const c = texts.common;
  server.registerTool(
    "list_task_plan_revisions",
    {
      description: texts.listRevisions.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        page_size: z.number().int().min(1).max(100).optional().describe(c.pageSize),
        page_token: z.string().optional().describe(c.pageToken),
      },
    },
    (args) =>
      withTask("read", args.task_id, async (taskId) => {
        const page = await plans.listRevisions({
          taskId,
          pageSize: args.page_size ?? 0,
          pageToken: args.page_token ?? "",
        });
        const revisions = page.revisions.map(({ content: _content, ...meta }) => meta);
        return metadataAndContent("Plan revisions", {
          revisions,
          next_page_token: page.nextPageToken || undefined,
        });
      }),
  );

  server.registerTool(
    "get_task_plan_revision",
    {
      description: texts.getRevision.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        revision_id: z.string().describe(c.revisionId),
      },
    },
    (args) =>
      withTask("read", args.task_id, async (taskId) => {
        const { revision } = await plans.getRevision({ taskId, revisionId: args.revision_id });
        const { content, ...meta } = revision ?? { content: "" };
        return metadataAndContent("Revision metadata", meta, content);
      }),
  );
}
