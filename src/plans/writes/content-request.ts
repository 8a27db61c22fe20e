import type { Caller } from "../../auth/caller";
import { authorOf, type RequestedAuthor, resolveAuthor } from "../rules/author";
import type { WriteResult } from "./content-commit";
import { commandOf, type ContentPath, type ContentWrite } from "./content-decision";
import { planErrors } from "../errors";
import { requestIdOwner, requestKey } from "../pipeline/idempotency";
import { codePointLength, isBlank, utf8Length } from "../../text/unicode";
import {
  checkMeasuredDisplayName,
  checkMeasuredTitle,
  checkSize,
  optionalId,
  parseWriteMode,
  requireId,
} from "../rules/validate";
import { afterReach, type Write } from "../pipeline/write-command";

/** The fields of a CreatePlan, UpdatePlan or SavePlan request that shape the write. */
export interface ContentRequest {
  readonly taskId: string;
  readonly requestId?: string | undefined;
  readonly title?: string | undefined;
  readonly content: string;
  readonly author?: RequestedAuthor | undefined;
  readonly expectedVersion?: number | undefined;
  readonly acknowledgeReduction?: boolean;
  /** Merge a stale write (CreatePlan with expected_version, UpdatePlan REPLACE). */
  readonly merge?: boolean | undefined;
}

/** The fields of an EditPlan request. */
export interface EditRequest {
  readonly taskId: string;
  readonly requestId?: string | undefined;
  readonly expectedVersion?: number | undefined;
  readonly oldText: string;
  readonly newText: string;
  readonly acknowledgeReduction: boolean;
  readonly author?: RequestedAuthor | undefined;
  /** Merge a stale edit. */
  readonly merge?: boolean | undefined;
}

/** The CreatePlan command: an agent create (or a conditional replace with expected_version); no mode (AC-005.2). */
export function createCommand(
  caller: Caller,
  request: ContentRequest & { readonly mode: string },
): Write<WriteResult> {
  return contentCommand(caller, request, "agent-create", request.mode);
}

/** The UpdatePlan command: an agent replace or append; never creates a plan. */
export function updateCommand(
  caller: Caller,
  request: ContentRequest & { readonly mode: string },
): Write<WriteResult> {
  return contentCommand(caller, request, "agent-update", request.mode);
}

/** The SavePlan command: an editor save creates or replaces; no mode, no version, empty content allowed. */
export function saveCommand(caller: Caller, request: ContentRequest): Write<WriteResult> {
  return contentCommand(caller, request, "editor-save", "");
}

/**
 * A CreatePlan, UpdatePlan or SavePlan request, read once (pure): its texts are measured, then
 * checked in the order of AC-TASKS-PLAN-APPEND-001.7. The task id and the mode come before the
 * task's reach (an UpdatePlan's mode is parsed; a CreatePlan has none); then, carried as a value
 * until reach is known: the author's name, the request id, the title, content validity (content
 * given, 001.4; an append's fragment not blank, 001.5; no reduction acknowledgement on an append),
 * then a replace's size. An append's size is measured once, on the composed content, under the
 * lock (007.1, 007.5). The agent methods remember request ids under a fingerprint of every field
 * that shapes the write, the mode as parsed; the editor's SavePlan does not.
 */
function contentCommand(
  caller: Caller,
  request: ContentRequest,
  path: Exclude<ContentPath, "agent-edit">,
  givenMode: string,
): Write<WriteResult> {
  const { author, requestedName } = authorOf(
    caller,
    request.author,
    path === "editor-save" ? "user" : "agent",
  );
  const nameChars = requestedName === null ? 0 : codePointLength(requestedName);
  const titleChars = request.title === undefined ? 0 : codePointLength(request.title);
  // Only a replace's size is judged here, and only an append's fragment can be blank (the mode
  // parses exactly: "append" and nothing else is an append).
  const appends = givenMode === "append";
  const contentBytes = appends ? 0 : utf8Length(request.content);
  const blank = appends && isBlank(request.content);
  const taskId = requireId("task_id", request.taskId);
  if (path === "agent-create" && givenMode !== "")
    throw planErrors.createHasNoMode(JSON.stringify(givenMode));
  // AC-TASKS-PLAN-APPEND-001.7: mode validity comes first, before task reach.
  const mode = parseWriteMode(givenMode);
  return afterReach(taskId, () => {
    checkMeasuredDisplayName("author.name", nameChars);
    const requestId = path === "editor-save" ? undefined : optionalId("request_id", request.requestId);
    const title = checkMeasuredTitle("title", request.title, titleChars);
    if (path !== "editor-save") {
      if (request.content === "") throw planErrors.contentRequired();
      if (mode === "append" && blank) throw planErrors.fragmentBlank();
      if (mode === "append" && request.acknowledgeReduction) throw planErrors.reductionAckNotApplicable();
      if (request.merge && mode === "append") throw planErrors.mergeNotApplicable("append");
      if (request.merge && path === "agent-create" && request.expectedVersion === undefined)
        throw planErrors.mergeNotApplicable("no-version");
    }
    if (mode === "replace") checkSize(contentBytes);
    const acknowledgeReduction = request.acknowledgeReduction ?? false;
    const method = path === "agent-create" ? "CreatePlan" : "UpdatePlan";
    // The editor's SavePlan has no request id (requestId is undefined): no key.
    const key = requestKey(requestId, requestIdOwner(caller, author), method, {
      title: request.title,
      content: request.content,
      mode,
      expectedVersion: request.expectedVersion,
      acknowledgeReduction,
      author: request.author,
      // Only when asked, so the fingerprints of requests from before merge existed stay the same.
      merge: request.merge === true ? true : undefined,
    });
    const write: ContentWrite = {
      path,
      mode,
      title,
      content: request.content,
      expectedVersion: request.expectedVersion,
      acknowledgeReduction,
      author,
      merge: path !== "editor-save" && request.merge === true,
    };
    return commandOf(taskId, { write, key });
  });
}

/** The EditPlan command: replaces the one occurrence of old_text (see decideEdit). */
export function editCommand(caller: Caller, request: EditRequest): Write<WriteResult> {
  const taskId = requireId("task_id", request.taskId);
  return afterReach(taskId, () => {
    if (request.oldText === "") throw planErrors.editTextRequired();
    const author = resolveAuthor(caller, request.author, "agent");
    const key = requestKey(
      optionalId("request_id", request.requestId),
      requestIdOwner(caller, author),
      "EditPlan",
      {
        expectedVersion: request.expectedVersion,
        oldText: request.oldText,
        newText: request.newText,
        acknowledgeReduction: request.acknowledgeReduction,
        author: request.author,
        merge: request.merge === true ? true : undefined,
      },
    );
    const write: ContentWrite = {
      path: "agent-edit",
      mode: "edit",
      oldText: request.oldText,
      title: undefined,
      content: request.newText,
      expectedVersion: request.expectedVersion,
      acknowledgeReduction: request.acknowledgeReduction,
      author,
      merge: request.merge === true,
    };
    return commandOf(taskId, { write, key });
  });
}
