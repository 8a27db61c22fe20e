import type { Caller } from "../auth/caller";
import { isBlank, utf8Length } from "../text/unicode";
import { type Author, type RequestedAuthor, resolveAuthor } from "./author";
import { planErrors } from "./errors";
import { type RequestKey, requestIdOwner, requestKey } from "./idempotency";
import { checkSize, checkTitle } from "./validate";
import type { WriteMode } from "./write-mode";

/** The write paths that store content. */
export type ContentPath = "agent-create" | "agent-update" | "agent-edit" | "editor-save";

/** How the new content is formed: given whole, appended, or an exact-text edit of the stored one. */
export type ContentMode = WriteMode | "edit";

/** A content write as validated before the lock (mode parsed, content checked, title checked). */
export interface ContentWrite {
  readonly path: ContentPath;
  readonly mode: ContentMode;
  /** Edit only: the exact text `content` replaces. */
  readonly oldText?: string;
  readonly title: string | undefined;
  readonly content: string;
  readonly expectedVersion: number | undefined;
  readonly acknowledgeReduction: boolean;
  readonly author: Author;
}

/** The fields of a CreatePlan, UpdatePlan or SavePlan request that shape the write. */
export interface ContentRequest {
  readonly taskId: string;
  readonly requestId?: string | undefined;
  readonly title?: string | undefined;
  readonly content: string;
  readonly author?: RequestedAuthor | undefined;
  readonly expectedVersion?: number | undefined;
  readonly acknowledgeReduction?: boolean;
}

/** Which content write a request is: its path, its mode, and the method its request id is kept under. */
export interface ContentUse {
  readonly path: ContentPath;
  readonly mode: WriteMode;
  /** The agent methods remember request ids; the editor's SavePlan does not. */
  readonly method?: "CreatePlan" | "UpdatePlan";
}

/** A content write that passed its checks, with the key a retry of it is recognized by. */
export interface CheckedContent {
  readonly write: ContentWrite;
  readonly key: RequestKey | undefined;
}

/**
 * Every check of a content write's request that comes after the task's reach, in the order of
 * AC-TASKS-PLAN-APPEND-001.7 (pure): the author's name, the request id, then validateContentWrite.
 */
export function checkContentWrite(caller: Caller, request: ContentRequest, use: ContentUse): CheckedContent {
  const author = resolveAuthor(caller, request.author, use.path === "editor-save" ? "user" : "agent");
  const key = use.method && contentRequestKey(use.method, request, use.mode, requestIdOwner(caller, author));
  return { write: validateContentWrite(request, use, author), key };
}

/**
 * The checks of a content write that need no stored state (pure), run after mode validity and task
 * reach and before the lock, in the order of AC-TASKS-PLAN-APPEND-001.7: the title, then content
 * validity (content given, 001.4; an append's fragment not blank, 001.5; no reduction
 * acknowledgement on an append), then a replace's size. An append's size is measured once, on the
 * composed content, under the lock (007.1, 007.5), after plan existence and the read of the stored
 * plan. Returns the write the lock then decides on.
 */
export function validateContentWrite(
  request: ContentRequest,
  how: { readonly path: ContentPath; readonly mode: WriteMode },
  author: Author,
): ContentWrite {
  const title = checkTitle("title", request.title);
  if (how.path !== "editor-save") {
    if (request.content === "") throw planErrors.contentRequired();
    if (how.mode === "append" && isBlank(request.content)) throw planErrors.fragmentBlank();
    if (how.mode === "append" && request.acknowledgeReduction) throw planErrors.reductionAckNotApplicable();
  }
  if (how.mode === "replace") checkSize(utf8Length(request.content));
  return {
    path: how.path,
    mode: how.mode,
    title,
    content: request.content,
    expectedVersion: request.expectedVersion,
    acknowledgeReduction: request.acknowledgeReduction ?? false,
    author,
  };
}

/**
 * The idempotency key of a CreatePlan or UpdatePlan (pure; undefined without a request id): every
 * field that shapes the write is in the fingerprint, the mode as parsed.
 */
export function contentRequestKey(
  method: "CreatePlan" | "UpdatePlan",
  request: ContentRequest,
  mode: WriteMode,
  owner: string,
): RequestKey | undefined {
  return requestKey(request.requestId, owner, method, {
    title: request.title,
    content: request.content,
    mode,
    expectedVersion: request.expectedVersion,
    acknowledgeReduction: request.acknowledgeReduction ?? false,
    author: request.author,
  });
}
