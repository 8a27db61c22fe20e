import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MergeMethod, WriteMode } from "@taskplans/client";
import type { PlanGateway } from "../plan-gateway";
import { acknowledge, rejected, type TaskRun } from "../tool-results";
import { mergedNote, reductionWarning, texts } from "../tool-texts";

const version = z.number().int().nonnegative();

/**
 * Registers the content writes: create_task_plan, update_task_plan (replace or append) and
 * edit_task_plan. Mode is validated here with the exact, case-sensitive rule of
 * REQ-TASKS-PLAN-APPEND-001 instead of a schema enum, so the caller sees the contract's message
 * (system design, "Mode parameter and validation").
 */
export function registerWriteTools(server: McpServer, plans: PlanGateway, withTask: TaskRun): void {
  const c = texts.common;
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
}

/** What an acknowledgement adds after its line: that the write merged, and a reduction's warning. */
function warningOf(written: {
  truncation?: { priorChars: number; newChars: number; priorRevisionNumber: number };
  merge?: { fromVersion: number; toVersion: number };
  mergeMethod?: MergeMethod;
}): string {
  const t = written.truncation;
  const m = written.merge;
  return [
    m
      ? mergedNote(
          m.fromVersion,
          m.toVersion,
          written.mergeMethod === MergeMethod.MERGE_METHOD_EDIT_REAPPLIED,
        )
      : "",
    t ? reductionWarning(t.priorChars, t.newChars, t.priorRevisionNumber) : "",
  ]
    .filter(Boolean)
    .join("\n\n");
}
