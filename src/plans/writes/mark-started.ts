import type { Caller } from "../../auth/caller";
import type { HeadRecord, HeadWrite } from "../ports/records";
import { implementationStartedChange } from "../changes/change-rows";
import { planErrors } from "../errors";
import { summarize } from "../pipeline/events";
import { checkDisplayName, requireId } from "../rules/validate";
import {
  afterReach,
  type Decision,
  type Unchanged,
  type Write,
  type WriteEnv,
  type WriteState,
} from "../pipeline/write-command";

/** A MarkImplementationStarted request. */
export interface MarkRequest {
  readonly taskId: string;
  readonly sessionId: string;
  /** Who started it, when the caller is not authenticated (empty: "user"). */
  readonly actor: string;
}

/**
 * The MarkImplementationStarted command: sets the plan's implementation-started marker once (first
 * mark wins) without changing its content, title or version (DESIGN.md invariant 4). Reads the
 * content because the answer carries the plan with it.
 */
export function markCommand(caller: Caller, request: MarkRequest): Write<HeadRecord> {
  const taskId = requireId("task_id", request.taskId);
  return afterReach(taskId, () => {
    const sessionId = requireId("session_id", request.sessionId);
    const by =
      caller.authenticated && caller.name
        ? caller.name
        : checkDisplayName("actor", request.actor.trim()) || "user";
    const author = { kind: caller.authenticated && caller.kind ? caller.kind : ("user" as const), name: by };
    return {
      taskId,
      kind: "mark",
      reads: "content",
      decide: (state, env) => decideMark(state, env, { by, sessionId, author }),
    };
  });
}

/**
 * The mark on what the write read: none without a live plan; the plan as it is when it is already
 * marked (nothing is written); else HEAD with the mark, and its change (step 1 of its version).
 */
export function decideMark(
  state: WriteState<"content">,
  env: WriteEnv,
  mark: {
    readonly by: string;
    readonly sessionId: string;
    readonly author: { kind: "agent" | "user"; name: string };
  },
): Decision<HeadRecord> | Unchanged<HeadRecord> {
  const { live } = state;
  if (live === null) throw planErrors.planNotFound(state.taskId);
  if (live.implementationStartedAt !== null) return { unchanged: live };
  const head: HeadWrite & HeadRecord = {
    ...live,
    implementationStartedAt: env.now,
    implementationStartedBy: mark.by,
    implementationStartedSessionId: mark.sessionId,
    updatedAt: env.now,
  };
  return {
    commit: {
      kind: "mark",
      head,
      fenceVersion: live.version,
      change: implementationStartedChange(summarize(head), mark.author, env.now),
    },
    result: head,
  };
}
