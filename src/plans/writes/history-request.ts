import type { Caller } from "../../auth/caller";
import { type RequestedAuthor, resolveAuthor } from "../rules/author";
import type { WriteResult } from "./content-commit";
import { planErrors } from "../errors";
import { summarize } from "../pipeline/events";
import { decideDelete, decideRestore, decideRevert, type RestoreResult } from "./history-decision";
import { requestIdOwner, requestKey } from "../pipeline/idempotency";
import { optionalId, requireId } from "../rules/validate";
import { afterReach, type Write, type WriteCommand } from "../pipeline/write-command";

/** The fields of a RestorePlanRevision request. */
export interface RestoreRequest {
  readonly taskId: string;
  readonly revisionId: string;
  readonly expectedVersion?: number | undefined;
  readonly expectedRevisionVersion: string;
  readonly author?: RequestedAuthor | undefined;
  readonly requestId?: string | undefined;
}

/** The RestorePlanRevision command: an agent restore, conditional on both versions (see decideRestore). */
export function restoreCommand(caller: Caller, request: RestoreRequest): Write<RestoreResult> {
  const taskId = requireId("task_id", request.taskId);
  return afterReach(taskId, () => {
    const revisionId = requireId("revision_id", request.revisionId);
    const author = resolveAuthor(caller, request.author, "agent");
    const requestId = optionalId("request_id", request.requestId);
    const key = requestKey(requestId, requestIdOwner(caller, author), "RestorePlanRevision", {
      revisionId,
      expectedVersion: request.expectedVersion,
      expectedRevisionVersion: request.expectedRevisionVersion,
      author: request.author,
    });
    const restore = {
      revisionId,
      expectedVersion: request.expectedVersion,
      expectedRevisionVersion: request.expectedRevisionVersion,
      author,
    };
    const command: WriteCommand<"content", RestoreResult> = {
      taskId,
      kind: "restore",
      reads: "content",
      revisionId,
      request: key,
      decide: (state, env, target) => decideRestore({ ...restore, target }, state, env),
    };
    return command;
  });
}

/** The RevertPlan command: an editor revert, a new revision copying the target (see decideRevert). */
export function revertCommand(
  caller: Caller,
  request: {
    readonly taskId: string;
    readonly revisionId: string;
    readonly author?: RequestedAuthor | undefined;
  },
): Write<WriteResult> {
  const taskId = requireId("task_id", request.taskId);
  return afterReach(taskId, () => {
    const revisionId = requireId("revision_id", request.revisionId);
    const author = resolveAuthor(caller, request.author, "user");
    const command: WriteCommand<"metadata", WriteResult> = {
      taskId,
      kind: "revert",
      // The plan's own text is not needed, so a revert recovers a plan that cannot be read.
      reads: "metadata",
      revisionId,
      decide: (state, env, target) => {
        if (target === null) throw planErrors.revisionNotFound(taskId, revisionId);
        return decideRevert(target, author, state, env);
      },
    };
    return command;
  });
}

/** The DeletePlan command: deletes the live plan, keeping its revisions. */
export function deletePlanCommand(
  caller: Caller,
  request: { readonly taskId: string; readonly expectedVersion?: number | undefined },
): Write<void> {
  const taskId = requireId("task_id", request.taskId);
  const author = resolveAuthor(caller, undefined, "user");
  const command: WriteCommand<"metadata", void> = {
    taskId,
    kind: "delete",
    // A delete needs neither text: it also clears a plan that cannot be read (runbook).
    reads: "metadata",
    decide: (state, env) => decideDelete(request.expectedVersion, author, state, env),
  };
  return command;
}

/** The DeleteTask command: the task and everything it holds, serialized with the plan's writes. */
export function deleteTaskCommand(taskId: string): Write<void> {
  const command: WriteCommand<"metadata", void> = {
    taskId: requireId("task_id", taskId),
    kind: "delete_task",
    reads: "metadata",
    decide: (state) => ({
      commit: { kind: "delete-task", taskId, plan: state.live ? summarize(state.live) : null },
      result: undefined,
    }),
  };
  return command;
}
