import { mergeConflictAction, staleVersionAction, texts } from "./tool-texts";

/**
 * The texts of the two prompts (plan-prompts.ts): reviewing a plan, and recovering from a refused
 * write, reason by reason, in tool names. Like the tool texts they never prescribe rewriting the
 * plan from memory, and name the append mode for adding a section.
 */
export const promptTexts = {
  review: {
    description:
      "Review a task's plan: the plan is embedded as a resource, with instructions to judge it step by step and to propose changes as small edits against its version, never a rewrite.",
    taskId: "Task whose plan to review; defaults to the task this server was started for.",
  },
  recover: {
    description:
      "What to do after a plan write was refused: give the refusal's reason (reason=... in the tool's answer) and, when the write sent one, its expected_version.",
    reason: "The reason from the refused write's answer, for example VERSION_MISMATCH or MERGE_CONFLICT.",
    expectedVersion: "The expected_version the refused write sent, if any.",
    taskId: "Task whose write was refused; defaults to the task this server was started for.",
  },
} as const;

/** The review instructions for a plan at `version`. */
export function reviewInstructions(taskId: string, version: number): string {
  return [
    `Review the plan of task ${taskId} above (version ${version}).`,
    "For each step: is it concrete, checkable, and in a sensible order? Name what is missing (tests, rollback, risks, open questions) and what is already done but not marked.",
    "Do not rewrite the plan. Propose each change as one edit_task_plan call (old_text copied exactly, new_text) with expected_version=" +
      `${version}, or an update_task_plan call with mode="append" for a new section.`,
    "If a write is refused, use the recover_from_refused_write prompt with its reason.",
  ].join("\n");
}

/** Reasons the recovery prompt knows, for completion. */
export const RECOVERABLE_REASONS = [
  "VERSION_MISMATCH",
  "MERGE_CONFLICT",
  "REDUCTION_NOT_ACKNOWLEDGED",
  "PLAN_TOO_LARGE",
  "EDIT_TEXT_NOT_FOUND",
  "EDIT_TEXT_NOT_UNIQUE",
  "HISTORY_UNAVAILABLE",
  "COMMIT_OUTCOME_UNKNOWN",
  "LOCK_UNAVAILABLE",
  "RATE_LIMITED",
  "WRITE_BUDGET_EXCEEDED",
] as const;

/** The steps back after a refusal with `reason` (`expected`: the version the write sent). */
export function recoverySteps(reason: string, expected: number | undefined): string {
  const since = expected === undefined ? "the expected_version you sent" : String(expected);
  switch (reason) {
    case "VERSION_MISMATCH":
      return `Someone else wrote the plan since you read it; nothing of yours was stored. ${staleVersionAction(expected)}`;
    case "MERGE_CONFLICT":
      return `Your change and theirs touch the same lines; nothing was stored. ${mergeConflictAction(since, "<the version get_task_plan_changes gives>")}`;
    case "REDUCTION_NOT_ACKNOWLEDGED":
      return 'Your replace would remove more than half of the plan; nothing was stored. To add a section, use update_task_plan with mode="append", which sends only the addition. If the removal is intended, retry the same replace with acknowledge_reduction=true (the prior content stays in the revision history).';
    case "PLAN_TOO_LARGE":
      return "The stored plan would exceed 262,144 UTF-8 bytes; nothing was stored. Shorten what you add, or condense finished sections with edit_task_plan (read the plan with get_task_plan first); older text stays in the revision history.";
    case "EDIT_TEXT_NOT_FOUND":
    case "EDIT_TEXT_NOT_UNIQUE":
      return "old_text must occur exactly once in the current plan; nothing was stored. Read the plan with get_task_plan, copy old_text exactly (whitespace and line endings included) and add surrounding lines until it is unique.";
    case "HISTORY_UNAVAILABLE":
      return texts.recovery.historyGoneWrite;
    case "COMMIT_OUTCOME_UNKNOWN":
      return texts.recovery.commitOutcomeUnknown;
    case "LOCK_UNAVAILABLE":
    case "RATE_LIMITED":
    case "WRITE_BUDGET_EXCEEDED":
      return "The service was busy or your write budget is spent; nothing was stored. Wait as long as the answer says, then retry the same call with the same request_id.";
    default:
      return "Follow the refusal's next_action: it says what to do. Read the plan with get_task_plan before writing again, and never rewrite the plan from memory.";
  }
}
