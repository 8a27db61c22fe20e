import { type Metadata, type ServiceError, status } from "@grpc/grpc-js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Plan } from "../../generated/ts/taskplans/v1/plan";
import { decodeStatusDetails } from "../grpc/status-details";

/** A successful write: one short acknowledgement line, never the document (AC-TASKS-PLAN-APPEND-006.6). */
export function acknowledge(verb: string, plan: Plan | undefined, extra = ""): CallToolResult {
  const line =
    `Plan ${verb} successfully: task_id=${plan?.taskId ?? ""}, title=${JSON.stringify(plan?.title ?? "")}, ` +
    `${plan?.contentBytes ?? 0} bytes, version=${plan?.version ?? 0}. Content omitted; read it with get_task_plan.`;
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

/** A tool error raised by the tool itself (before calling the service). */
export function rejected(detail: string, reason: string, nextAction: string): CallToolResult {
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: `Plan was not changed because ${detail}. reason=${reason}; next_action=${nextAction}`,
      },
    ],
  };
}

/**
 * A gRPC failure as a tool error: the service's own message (which starts "Plan was not changed
 * because ..." for writes), its reason and next action. No stack trace, no storage detail. A
 * transport failure is worded honestly: the outcome of a write is then unknown.
 */
export function fromGrpcError(error: unknown): CallToolResult {
  const serviceError = error as Partial<ServiceError>;
  const details = decodeStatusDetails(serviceError.metadata as Metadata | undefined);
  const info = details?.errorInfo;
  if (!info) {
    const code = status[serviceError.code ?? status.UNKNOWN] ?? "UNKNOWN";
    return {
      isError: true,
      content: [
        {
          type: "text",
          text: `Plan may not have been changed: the plan service did not answer (${code}). reason=${code}; next_action=Read the plan with get_task_plan before retrying a write, or retry with the same request_id.`,
        },
      ],
    };
  }
  const message = details.message;
  const sentence = message.startsWith("Plan was not changed because")
    ? message
    : `Plan was not changed because ${message.charAt(0).toLowerCase()}${message.slice(1)}`;
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: `${sentence} reason=${info.reason}; next_action=${info.metadata.next_action ?? "Retry later."}`,
      },
    ],
  };
}
