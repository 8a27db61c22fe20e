import type { Author } from "./author";
import { composeAppend, composeAppendInStore } from "./compose";
import { applyExactEdit } from "./exact-edit";
import { planErrors } from "./errors";
import { isSuspiciousReduction } from "./reduction";

import { checkSize } from "./validate";
import {
  commitContent,
  contentOf,
  livePlan,
  type StoredContent,
  type Truncation,
  type WriteDecision,
  type WriteEnv,
  type WriteState,
  wholeContent,
} from "./write-context";
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
 * Decides a content write from the state read inside the serialized region (pure: no I/O).
 * Order after the lock: plan existence -> (append) compose + size on the composed content ->
 * version rules (seed 003) -> (edit) exact replacement, empty result, size -> reduction guard
 * (agent replace and edit) -> commit.
 */
export function decideContentWrite(write: ContentWrite, state: WriteState, env: WriteEnv): WriteDecision {
  const live = livePlan(state);
  const needsPlan = write.path === "agent-update" || write.path === "agent-edit";
  if (needsPlan && live === null) throw planErrors.planNotFound(state.taskId);

  let content: StoredContent | null = null;
  if (write.mode === "append" && live !== null) {
    // AC-TASKS-PLAN-APPEND-007.1/007.3/007.4: measured once, here, on the composed content. The
    // database composes it from the recorded trimmed lengths; a row written before they were
    // recorded was read whole and composes here.
    const { trimmedChars, trimmedBytes } = live;
    content =
      live.content === null && trimmedChars != null && trimmedBytes != null
        ? composeAppendInStore({ trimmedChars, trimmedBytes }, write.content)
        : wholeContent(composeAppend(contentOf(live), write.content));
    checkSize(content.bytes);
  }

  checkVersion(write, state);

  if (write.mode === "edit" && live !== null) {
    const edited = applyExactEdit(contentOf(live), write.oldText ?? "", write.content);
    if (edited === "") throw planErrors.contentRequired();
    content = wholeContent(edited);
    checkSize(content.bytes);
  }
  content ??= wholeContent(write.content);

  let truncation: Truncation | null = null;
  const judgesReduction = write.path !== "editor-save" && write.mode !== "append" && live !== null;
  if (judgesReduction) {
    const newChars = content.chars;
    if (isSuspiciousReduction(live.contentChars, newChars)) {
      if (!write.acknowledgeReduction) throw planErrors.reductionNotAcknowledged(live.contentChars, newChars);
      truncation = { priorChars: live.contentChars, newChars, priorRevisionNumber: priorRevision(state) };
    }
  }

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
function priorRevision(state: WriteState): number {
  const live = livePlan(state);
  const latest = state.latest;
  if (!live || !latest || contentOf(latest) !== contentOf(live) || latest.title !== live.title) {
    throw new Error("plan history does not hold the current content; refusing an acknowledged reduction");
  }
  return latest.number;
}
