import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RestoreStatus, WriteMode } from "@taskplans/client";
import { registerChangesTool } from "./changes-tool";
import type { PlanGateway } from "./plan-gateway";
import {
  acknowledge,
  CONFIGURE_TOKEN,
  fromGrpcError,
  metadataAndContent,
  rejected,
  type TaskRun,
} from "./tool-results";
import { mergedNote, reductionWarning, texts } from "./tool-texts";

const version = z.number().int().nonnegative();

/**
 * Registers the plan tools. Mode is validated here with the exact, case-sensitive rule of
 * REQ-TASKS-PLAN-APPEND-001 instead of a schema enum, so the caller sees the contract's message
 * (system design, "Mode parameter and validation").
 */
export function registerPlanTools(
  server: McpServer,
  plans: PlanGateway,
  defaultTaskId: string | undefined,
): void {
  const taskIdOf = (given: string | undefined) => given || defaultTaskId;
  const withTask: TaskRun = async (kind, given, run, expectedVersion) => {
    const taskId = taskIdOf(given);
    const tokenProblem = plans.tokenProblem();
    if (tokenProblem) return rejected(tokenProblem, "TOKEN_INVALID", CONFIGURE_TOKEN, kind);
    if (!taskId)
      return rejected(
        "no task_id was given and this server has no default task",
        "INVALID_FIELD",
        "Pass task_id.",
        kind,
      );
    try {
      return await run(taskId);
    } catch (error) {
      return fromGrpcError(error, kind, expectedVersion);
    }
  };
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

  server.registerTool(
    "create_task_plan",
    {
      description: texts.createPlan.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        content: z.string().optional().describe(texts.createPlan.content),
        title: z.string().optional().describe(c.title),
        mode: z.any().optional().describe(texts.createPlan.mode),
        expected_version: version.optional().describe(texts.createPlan.expectedVersion),
        acknowledge_reduction: z.boolean().optional().describe(c.acknowledgeReduction),
        request_id: z.string().optional().describe(c.requestId),
        merge: z.boolean().optional().describe(c.merge),
      },
    },
    (args) => {
      // AC-TASKS-PLAN-APPEND-005.2: declared only to reject, naming the tool that appends.
      if (args.mode !== undefined && args.mode !== "") {
        return rejected(
          `create_task_plan always writes the whole document and takes no mode (got ${JSON.stringify(args.mode)})`,
          "INVALID_WRITE_MODE",
          'To add a section, call update_task_plan with mode="append"; to create the plan, omit mode.',
        );
      }
      return withTask(
        "mergeable",
        args.task_id,
        async (taskId) => {
          const written = await plans.createPlan({
            taskId,
            content: args.content ?? "",
            title: args.title,
            expectedVersion: args.expected_version,
            acknowledgeReduction: args.acknowledge_reduction ?? false,
            requestId: args.request_id,
            merge: args.merge,
          });
          return acknowledge(
            args.expected_version === undefined ? "created" : "replaced",
            written.plan,
            warningOf(written),
          );
        },
        args.expected_version,
      );
    },
  );

  server.registerTool(
    "update_task_plan",
    {
      description: texts.updatePlan.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        content: z.string().optional().describe(texts.updatePlan.content),
        mode: z.any().optional().describe(texts.updatePlan.mode),
        title: z.string().optional().describe(c.title),
        expected_version: version.optional().describe(texts.updatePlan.expectedVersion),
        acknowledge_reduction: z.boolean().optional().describe(c.acknowledgeReduction),
        request_id: z.string().optional().describe(c.requestId),
        merge: z.boolean().optional().describe(texts.updatePlan.merge),
      },
    },
    (args) => {
      const mode = args.mode === undefined || args.mode === "" ? "replace" : args.mode;
      if (mode !== "replace" && mode !== "append") {
        return rejected(
          `mode ${JSON.stringify(args.mode)} is not recognized; the accepted values are "replace" and "append"`,
          "INVALID_WRITE_MODE",
          'Retry with mode "replace" (the whole document) or "append" (only the addition).',
        );
      }
      return withTask(
        mode === "append" ? "write" : "mergeable",
        args.task_id,
        async (taskId) => {
          const written = await plans.updatePlan({
            taskId,
            content: args.content ?? "",
            mode: mode === "append" ? WriteMode.WRITE_MODE_APPEND : WriteMode.WRITE_MODE_REPLACE,
            title: args.title,
            expectedVersion: args.expected_version,
            acknowledgeReduction: args.acknowledge_reduction ?? false,
            requestId: args.request_id,
            merge: args.merge,
          });
          return acknowledge(mode === "append" ? "appended" : "replaced", written.plan, warningOf(written));
        },
        args.expected_version,
      );
    },
  );

  server.registerTool(
    "edit_task_plan",
    {
      description: texts.editPlan.description,
      inputSchema: {
        task_id: z.string().optional().describe(c.taskId),
        expected_version: version.optional().describe(texts.common.versionRequired),
        old_text: z.string().describe(texts.editPlan.oldText),
        new_text: z.string().describe(texts.editPlan.newText),
        acknowledge_reduction: z.boolean().optional().describe(c.acknowledgeReduction),
        request_id: z.string().optional().describe(c.requestId),
        merge: z.boolean().optional().describe(c.merge),
      },
    },
    (args) =>
      withTask(
        "mergeable",
        args.task_id,
        async (taskId) => {
          const written = await plans.editPlan({
            taskId,
            expectedVersion: args.expected_version,
            oldText: args.old_text,
            newText: args.new_text,
            acknowledgeReduction: args.acknowledge_reduction ?? false,
            requestId: args.request_id,
            merge: args.merge,
          });
          return acknowledge("edited", written.plan, warningOf(written));
        },
        args.expected_version,
      ),
  );

  registerChangesTool(server, plans, withTask);

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

/** What an acknowledgement adds after its line: that the write merged, and a reduction's warning. */
function warningOf(written: {
  truncation?: { priorChars: number; newChars: number; priorRevisionNumber: number };
  merge?: { fromVersion: number; toVersion: number };
}): string {
  const t = written.truncation;
  const m = written.merge;
  return [
    m ? mergedNote(m.fromVersion, m.toVersion) : "",
    t ? reductionWarning(t.priorChars, t.newChars, t.priorRevisionNumber) : "",
  ]
    .filter(Boolean)
    .join("\n\n");
}
