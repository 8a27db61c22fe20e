import { type Metadata, type ServiceError, status } from "@grpc/grpc-js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodeStatusDetails, type ErrorInfo, type Plan } from "@taskplans/client";
import { checklistNote, conflictRegions, mergeConflictAction, staleVersionAction, texts } from "./tool-texts";

/**
 * A successful write: one short acknowledgement line, never the document (AC-TASKS-PLAN-APPEND-006.6),
 * with the plan's checklist progress when the answer carries it and the plan has a checklist.
 */
export function acknowledge(verb: string, plan: Plan | undefined, extra = ""): CallToolResult {
  const line =
    `Plan ${verb} successfully: task_id=${plan?.taskId ?? ""}, title=${JSON.stringify(plan?.title ?? "")}, ` +
    `${plan?.contentBytes ?? 0} bytes, version=${plan?.version ?? 0}.${checklistNote(plan?.checklist)} Content omitted; read it with get_task_plan.`;
  return { content: [{ type: "text", text: extra ? `${line}\n\n${extra}` : line }] };
}

/** A tool answer with a JSON metadata block and, optionally, a content block. */
export function metadataAndContent(label: string, metadata: object, content?: string): CallToolResult {
  const blocks: CallToolResult["content"] = [
    { type: "text", text: `${label}:\n${JSON.stringify(metadata, null, 2)}` },
  ];
  if (content !== undefined) blocks.push({ type: "text", text: content });
  return { content: blocks };
}

/** A tool error raised by the tool itself (before calling the service): nothing was read or changed. */
export function rejected(
  detail: string,
  reason: string,
  nextAction: string,
  kind: ToolKind = "write",
): CallToolResult {
  const lead = kind === "read" ? "The plan was not read because" : "Plan was not changed because";
  return {
    isError: true,
    content: [{ type: "text", text: `${lead} ${detail}. reason=${reason}; next_action=${nextAction}` }],
  };
}

/**
 * Whether a tool reads or writes: a failed write must say whether the plan may have changed. A
 * "mergeable" write (create, replace, edit) can retry a stale version with merge=true.
 */
export type ToolKind = "read" | "write" | "mergeable";

/**
 * Runs a tool's call for a task (the given one or the server's default), turning failures into tool
 * errors; `expectedVersion` (a write's) lets a VERSION_MISMATCH name the version to catch up from.
 */
export type TaskRun = (
  kind: ToolKind,
  given: string | undefined,
  run: (taskId: string) => Promise<CallToolResult>,
  expectedVersion?: number,
) => Promise<CallToolResult>;

// Reasons raised before the service looked at the plan; their messages do not mention the plan.
const CALL_REJECTED = new Set([
  "TOKEN_MISSING",
  "TOKEN_INVALID",
  "TOKEN_EXPIRED",
  "TOKEN_KEY_UNKNOWN",
  "MALFORMED_REQUEST",
  "INVALID_UTF8",
]);
// Without ErrorInfo, these codes come from the transport or a crash: a write's outcome is unknown.
const OUTCOME_UNKNOWN = new Set<number>([
  status.UNAVAILABLE,
  status.DEADLINE_EXCEEDED,
  status.CANCELLED,
  status.UNKNOWN,
  status.INTERNAL,
  status.DATA_LOSS,
]);
/** How to give this MCP server a token (the service's own advice names gRPC metadata). */
export const CONFIGURE_TOKEN =
  "Configure a bearer token for this MCP server: set PLAN_MCP_TOKEN (stdio), or send 'Authorization: Bearer <token>' (HTTP).";

/**
 * A gRPC failure as a tool error, worded from ErrorInfo.reason and the status code, never from the
 * message text. Definite rejections of a write say "Plan was not changed"; only an unknown outcome
 * (a transport failure, a crash) says it "may not have been changed", and the service's own
 * COMMIT_OUTCOME_UNKNOWN that it "may have been applied" (retry with the same request_id). A failed read says "The plan
 * was not read". No stack trace, no storage detail.
 */
export function fromGrpcError(error: unknown, kind: ToolKind, expectedVersion?: number): CallToolResult {
  const serviceError = error as Partial<ServiceError>;
  const code = serviceError.code ?? status.UNKNOWN;
  const codeName = status[code] ?? "UNKNOWN";
  const info = decodeStatusDetails(serviceError.metadata as Metadata | undefined)?.errorInfo;
  const message = serviceError.details ?? "";
  const write = kind !== "read";
  let text: string;
  let reason = info?.reason ?? codeName;
  let nextAction = info?.metadata.next_action;
  if (info && info.reason !== "INTERNAL") {
    // The service's own answer, never reworded: a refused write already says "Plan was not changed
    // because ..."; a rejection before the service looked at the plan, and a failed read, get a lead
    // saying what did not happen (a failed read: nothing was being changed), then the service's text.
    const lead = write ? "Plan was not changed" : "The plan was not read";
    text = write && !CALL_REJECTED.has(info.reason) ? message : `${lead}: ${message}`;
    if (info.reason.startsWith("TOKEN_")) nextAction = CONFIGURE_TOKEN;
    nextAction = staleNextAction(info, kind, expectedVersion) ?? nextAction;
  } else if (!info && !OUTCOME_UNKNOWN.has(code)) {
    // Refused by the service's gRPC layer before any handler ran (for example a message too large).
    text = `${write ? "Plan was not changed because the" : "The"} plan service refused the request (${codeName}: ${message}).`;
    nextAction =
      code === status.RESOURCE_EXHAUSTED
        ? "Send less in one call: the request exceeds the service's size limit."
        : "Correct the request and retry.";
  } else if (write) {
    text = `Plan may not have been changed: the plan service did not complete the call (${codeName}).`;
    reason = codeName;
    nextAction =
      "Read the plan with get_task_plan before retrying a write, or retry with the same request_id.";
  } else {
    text = `The plan service did not answer (${codeName}).`;
    reason = codeName;
    nextAction = "Retry the read.";
  }
  const content: CallToolResult["content"] = [
    { type: "text", text: `${text} reason=${reason}; next_action=${nextAction ?? "Retry the call."}` },
  ];
  // MERGE_CONFLICT: the conflicting lines (bounded by the service), so the agent can redo its change.
  if (info?.reason === "MERGE_CONFLICT" && info.metadata.conflicts)
    content.push({
      type: "text",
      text: conflictRegions(info.metadata.conflict_regions ?? "", info.metadata.conflicts),
    });
  return { isError: true, content };
}

/**
 * The next action in tool names for the refusals that changes-since and merge recover from: a stale
 * version (create, replace and edit can merge), a merge conflict, and history that is gone.
 */
function staleNextAction(
  info: ErrorInfo,
  kind: ToolKind,
  expectedVersion: number | undefined,
): string | undefined {
  const m = info.metadata;
  switch (info.reason) {
    case "VERSION_MISMATCH":
      return kind === "mergeable" ? staleVersionAction(expectedVersion) : undefined;
    case "MERGE_CONFLICT":
      return mergeConflictAction(m.base_version ?? "", m.current_version ?? "");
    case "HISTORY_UNAVAILABLE":
      return kind === "read" ? texts.recovery.historyGoneRead : texts.recovery.historyGoneWrite;
    case "COMMIT_OUTCOME_UNKNOWN":
      return texts.recovery.commitOutcomeUnknown;
    default:
      return undefined;
  }
}
