import type { Author } from "./author";
import { composeAppend, composeAppendInStore } from "./compose";
import { applyExactEdit } from "./exact-edit";
import { planErrors } from "./errors";
import { isSuspiciousReduction } from "./reduction";

import { checkSize } from "./validate";
import {
  commitContent,
  type Decision,
  livePlan,
  type StoredContent,
  type Truncation,
  type WriteEnv,
  type WriteResult,
  type WriteState,
  wholeContent,
} from "./write-context";
import type { LockedHead, ReadKind } from "./ports/records";
import { requireCurrentVersion } from "./versions";
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

/**
 * How a content write is decided, and what it reads for it: an append and an editor save only the
 * metadata (the database composes an append; a save judges nothing by the old text, and so also
 * recovers a plan that cannot be read), every other write the contents as well.
 */
export type ContentDecider =
  | {
      readonly reads: "metadata";
      readonly decide: (state: WriteState<"metadata">, env: WriteEnv) => Decision<WriteResult>;
    }
  | {
      readonly reads: "content";
      readonly decide: (state: WriteState<"content">, env: WriteEnv) => Decision<WriteResult>;
    };

export function contentDecider(write: ContentWrite): ContentDecider {
  if (write.mode === "append")
    return { reads: "metadata", decide: (state, env) => decideAppend(write, state, env) };
  if (write.path === "editor-save")
    return { reads: "metadata", decide: (state, env) => decideSave(write, state, env) };
  if (write.mode === "edit")
    return { reads: "content", decide: (state, env) => decideEdit(write, state, env) };
  return { reads: "content", decide: (state, env) => decideReplace(write, state, env) };
}

/**
 * An append (pure: no I/O). Order after the lock: plan existence -> compose + size on the composed
 * content (AC-TASKS-PLAN-APPEND-007.1/007.3/007.4: measured once, here) -> version, when given.
 * The database composes it from the recorded trimmed lengths; a row written before they were
 * recorded brought its content, and composes here.
 */
export function decideAppend(
  write: ContentWrite,
  state: WriteState<"metadata">,
  env: WriteEnv,
): Decision<WriteResult> {
  const live = requirePlan(write, state);
  let content: StoredContent = wholeContent(write.content);
  if (live !== null) {
    const { trimmedChars, trimmedBytes, legacyContent } = live;
    content =
      legacyContent === null && trimmedChars != null && trimmedBytes != null
        ? composeAppendInStore({ trimmedChars, trimmedBytes }, write.content)
        : wholeContent(composeAppend(legacyContent ?? "", write.content));
    checkSize(content.bytes);
  }
  checkVersion(write, state);
  return commitNew(write, state, env, content, null);
}

/** An editor save: creates or replaces, judged by nothing but its own size (checked before the lock). */
export function decideSave(
  write: ContentWrite,
  state: WriteState<"metadata">,
  env: WriteEnv,
): Decision<WriteResult> {
  return commitNew(write, state, env, wholeContent(write.content), null);
}

/**
 * An agent create or replace. Order after the lock: plan existence (replace) -> version rules
 * (seed 003) -> reduction guard -> commit.
 */
export function decideReplace(
  write: ContentWrite,
  state: WriteState<"content">,
  env: WriteEnv,
): Decision<WriteResult> {
  requirePlan(write, state);
  checkVersion(write, state);
  const content = wholeContent(write.content);
  return commitNew(write, state, env, content, judgeReduction(write, state, content));
}

/**
 * An agent exact-text edit. Order after the lock: plan existence -> version -> exact replacement,
 * empty result, size -> reduction guard -> commit.
 */
export function decideEdit(
  write: ContentWrite,
  state: WriteState<"content">,
  env: WriteEnv,
): Decision<WriteResult> {
  const live = requirePlan(write, state);
  checkVersion(write, state);
  let content = wholeContent(write.content);
  if (live !== null) {
    const edited = applyExactEdit(live.content, write.oldText ?? "", write.content);
    if (edited === "") throw planErrors.contentRequired();
    content = wholeContent(edited);
    checkSize(content.bytes);
  }
  return commitNew(write, state, env, content, judgeReduction(write, state, content));
}

// An agent update or edit needs a live plan; a create or save makes one.
function requirePlan<K extends ReadKind>(write: ContentWrite, state: WriteState<K>): LockedHead<K> | null {
  const live = livePlan(state);
  const needsPlan = write.path === "agent-update" || write.path === "agent-edit";
  if (needsPlan && live === null) throw planErrors.planNotFound(state.taskId);
  return live;
}

// The reduction guard of an agent replace or edit: refused unless acknowledged, and then reported.
function judgeReduction(
  write: ContentWrite,
  state: WriteState<"content">,
  content: StoredContent,
): Truncation | null {
  const live = livePlan(state);
  if (live === null || !isSuspiciousReduction(live.contentChars, content.chars)) return null;
  if (!write.acknowledgeReduction)
    throw planErrors.reductionNotAcknowledged(live.contentChars, content.chars);
  return {
    priorChars: live.contentChars,
    newChars: content.chars,
    priorRevisionNumber: priorRevision(state),
  };
}

function commitNew(
  write: ContentWrite,
  state: WriteState,
  env: WriteEnv,
  content: StoredContent,
  truncation: Truncation | null,
): Decision<WriteResult> {
  return commitContent(state, env, {
    title: write.title,
    content,
    author: write.author,
    // An acknowledged reduction goes on a new revision so the prior content stays in its own.
    forceNewRevision: truncation !== null,
    revertOfRevisionId: null,
    truncation,
  });
}

/**
 * Version rules of seed 003. Agent create: no plan -> creates, unless a (necessarily stale) version
 * is given; a plan -> PLAN_EXISTS without a version, else a conditional replace. Agent replace and
 * edit need the current version; agent append checks it only when given. The editor path never does.
 */
function checkVersion(write: ContentWrite, state: WriteState): void {
  if (write.path === "editor-save") return;
  const live = livePlan(state);
  const expected = write.expectedVersion;
  if (live === null) {
    if (expected !== undefined) throw planErrors.versionMismatch();
    return;
  }
  if (write.mode === "append") {
    if (expected !== undefined && expected !== live.version) throw planErrors.versionMismatch();
    return;
  }
  if (expected === undefined && write.path === "agent-create") throw planErrors.planExists(state.taskId);
  requireCurrentVersion(live, expected);
}

// The newest revision holds the HEAD content (HEAD and revision are written in one transaction);
// if it does not, the prior content could not be pointed to, so refuse rather than lose it.
function priorRevision(state: WriteState<"content">): number {
  const live = livePlan(state);
  const latest = state.latest;
  if (!live || !latest || latest.content !== live.content || latest.title !== live.title) {
    throw new Error("plan history does not hold the current content; refusing an acknowledged reduction");
  }
  return latest.number;
}
