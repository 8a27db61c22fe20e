import type { Caller } from "../auth/caller";
import { type RequestedAuthor, resolveAuthor } from "./author";
import type { WriteResult } from "./content-commit";
import { checkContentWrite, type ContentRequest, type ContentWrite } from "./content-checks";
import { commandOf } from "./content-write";
import { planErrors } from "./errors";
import { requestIdOwner, requestKey } from "./idempotency";
import { requireId } from "./validate";
import { afterReach, type Write } from "./write-command";
import { parseWriteMode } from "./write-mode";

export type { ContentRequest } from "./content-checks";

/** The fields of an EditPlan request. */
export interface EditRequest {
  readonly taskId: string;
  readonly requestId?: string | undefined;
  readonly expectedVersion?: number | undefined;
  readonly oldText: string;
  readonly newText: string;
  readonly acknowledgeReduction: boolean;
  readonly author?: RequestedAuthor | undefined;
}

/** The CreatePlan command: an agent create (or a conditional replace with expected_version); no mode (AC-005.2). */
export function createCommand(
  caller: Caller,
  request: ContentRequest & { readonly mode: string },
): Write<WriteResult> {
  const taskId = requireId("task_id", request.taskId);
  if (request.mode !== "") throw planErrors.createHasNoMode(JSON.stringify(request.mode));
  const use = { path: "agent-create", mode: "replace", method: "CreatePlan" } as const;
  return afterReach(taskId, () => commandOf(taskId, checkContentWrite(caller, request, use)));
}

/** The UpdatePlan command: an agent replace or append; never creates a plan. */
export function updateCommand(
  caller: Caller,
  request: ContentRequest & { readonly mode: string },
): Write<WriteResult> {
  const taskId = requireId("task_id", request.taskId);
  // AC-TASKS-PLAN-APPEND-001.7: mode validity comes first, before task reach.
  const use = { path: "agent-update", mode: parseWriteMode(request.mode), method: "UpdatePlan" } as const;
  return afterReach(taskId, () => commandOf(taskId, checkContentWrite(caller, request, use)));
}

/** The SavePlan command: an editor save creates or replaces; no mode, no version, empty content allowed. */
export function saveCommand(caller: Caller, request: ContentRequest): Write<WriteResult> {
  const taskId = requireId("task_id", request.taskId);
  const use = { path: "editor-save", mode: "replace" } as const;
  return afterReach(taskId, () => commandOf(taskId, checkContentWrite(caller, request, use)));
}

/** The EditPlan command: replaces the one occurrence of old_text (see decideEdit). */
export function editCommand(caller: Caller, request: EditRequest): Write<WriteResult> {
  const taskId = requireId("task_id", request.taskId);
  return afterReach(taskId, () => {
    if (request.oldText === "") throw planErrors.editTextRequired();
    const author = resolveAuthor(caller, request.author, "agent");
    const key = requestKey(request.requestId, requestIdOwner(caller, author), "EditPlan", {
      expectedVersion: request.expectedVersion,
      oldText: request.oldText,
      newText: request.newText,
      acknowledgeReduction: request.acknowledgeReduction,
      author: request.author,
    });
    const write: ContentWrite = {
      path: "agent-edit",
      mode: "edit",
      oldText: request.oldText,
      title: undefined,
      content: request.newText,
      expectedVersion: request.expectedVersion,
      acknowledgeReduction: request.acknowledgeReduction,
      author,
    };
    return commandOf(taskId, { write, key });
  });
}
