import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { PlanGateway } from "./plan-gateway";
import { planUri } from "./plan-uri";
import { promptTexts, RECOVERABLE_REASONS, recoverySteps, reviewInstructions } from "./prompt-texts";
import { refuseUnsendableToken, resourceError } from "./resource-errors";

/**
 * Two prompts for an agent's host: `review_plan` (the plan embedded as a resource, with review
 * instructions bound to its version) and `recover_from_refused_write` (the way back after a
 * refusal, reason by reason; its `reason` argument completes from the known reasons).
 */
export function registerPlanPrompts(
  server: McpServer,
  plans: PlanGateway,
  defaultTaskId: string | undefined,
): void {
  const taskIdOf = (given: string | undefined) => {
    const taskId = given || defaultTaskId;
    if (!taskId)
      throw new McpError(ErrorCode.InvalidParams, "no task_id was given and this server has no default task");
    return taskId;
  };
  server.registerPrompt(
    "review_plan",
    {
      title: "Review this plan",
      description: promptTexts.review.description,
      argsSchema: { task_id: z.string().optional().describe(promptTexts.review.taskId) },
    },
    async (args) => {
      const taskId = taskIdOf(args.task_id);
      refuseUnsendableToken(plans);
      const uri = planUri(taskId);
      const read = await plans.getPlan({ taskId }).catch((error: unknown) => {
        throw resourceError(error, uri);
      });
      const version = read.plan?.version ?? 0;
      return {
        description: `Review of the plan of task ${taskId}, version ${version}`,
        messages: [
          {
            role: "user",
            content: {
              type: "resource",
              resource: { uri, mimeType: "text/markdown", text: read.plan?.content ?? "" },
            },
          },
          { role: "user", content: { type: "text", text: reviewInstructions(taskId, version) } },
        ],
      };
    },
  );
  server.registerPrompt(
    "recover_from_refused_write",
    {
      title: "Recover from a refused write",
      description: promptTexts.recover.description,
      argsSchema: {
        reason: completable(z.string().describe(promptTexts.recover.reason), (value) =>
          RECOVERABLE_REASONS.filter((reason) => reason.startsWith(value.toUpperCase())),
        ),
        expected_version: z.string().optional().describe(promptTexts.recover.expectedVersion),
        task_id: z.string().optional().describe(promptTexts.recover.taskId),
      },
    },
    (args) => {
      const expected = /^\d+$/.test(args.expected_version ?? "") ? Number(args.expected_version) : undefined;
      const task = args.task_id || defaultTaskId;
      const lead = `A write to the plan${task ? ` of task ${task}` : ""} was refused with reason=${args.reason}.`;
      return {
        messages: [
          {
            role: "user",
            content: { type: "text", text: `${lead}\n${recoverySteps(args.reason, expected)}` },
          },
        ],
      };
    },
  );
}
