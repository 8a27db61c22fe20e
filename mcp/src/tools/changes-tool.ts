import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AuthorKind, type GetPlanChangesResponse, PlanChangeKind } from "@taskplans/client";
import type { PlanGateway } from "../plan-gateway";
import type { TaskRun } from "../tool-results";
import { texts } from "../tool-texts";

/**
 * Registers get_task_plan_changes: what changed since a version the agent read, so that recovering
 * from a stale write costs the size of the change, not of the plan (issue 44).
 */
export function registerChangesTool(server: McpServer, plans: PlanGateway, withTask: TaskRun): void {
  server.registerTool(
    "get_task_plan_changes",
    {
      description: texts.getChanges.description,
      inputSchema: {
        task_id: z.string().optional().describe(texts.common.taskId),
        since_version: z.number().int().nonnegative().describe(texts.getChanges.sinceVersion),
      },
    },
    (args) =>
      withTask("read", args.task_id, async (taskId) =>
        changesSince(await plans.getChanges({ taskId, sinceVersion: args.since_version })),
      ),
  );
}

const kindName = (kind: PlanChangeKind) =>
  (PlanChangeKind[kind] ?? String(kind)).replace(/^PLAN_CHANGE_KIND_/, "").toLowerCase();
const authorName = (author: GetPlanChangesResponse["changes"][number]["author"]) =>
  `${author?.kind === AuthorKind.AUTHOR_KIND_USER ? "user" : "agent"} ${JSON.stringify(author?.name ?? "")}`;

/**
 * The answer, compact: one line with the versions and sizes, one per change in between, then the
 * unified diff as its own block (never the plan itself).
 */
export function changesSince(read: GetPlanChangesResponse): CallToolResult {
  const version = read.plan?.version ?? 0;
  const diff = read.diff;
  const now = `now version ${version} (your next expected_version)`;
  if (!diff?.unifiedDiff) {
    const same = version === read.sinceVersion ? "it is the current version" : now;
    return {
      content: [
        {
          type: "text",
          text: `No changes to the plan's content since version ${read.sinceVersion}: ${same}, ${diff?.newBytes ?? 0} bytes.`,
        },
      ],
    };
  }
  const lines = [
    `Plan changes since version ${read.sinceVersion}: ${now}, ${diff.newBytes} bytes (was ${diff.oldBytes}); diff: +${diff.linesAdded} -${diff.linesRemoved} lines.`,
    ...read.changes.map(
      (change) =>
        `- version ${change.version}: ${kindName(change.kind)} by ${authorName(change.author)}${change.committedAt ? ` at ${change.committedAt.toISOString()}` : ""}`,
    ),
  ];
  if (read.changesTruncated) lines.push("- (older changes in between not listed; the diff covers them)");
  return {
    content: [
      { type: "text", text: lines.join("\n") },
      { type: "text", text: diff.unifiedDiff },
    ],
  };
}
