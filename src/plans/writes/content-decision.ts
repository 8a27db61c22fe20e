import { decideAppend } from "./append-decision";
import type { Author } from "../rules/author";
import {
  commitContent,
  type StoredContent,
  type Truncation,
  type WriteResult,
  wholeContent,
} from "./content-commit";
import { applyExactEdit } from "../rules/exact-edit";
import { planErrors } from "../errors";
import { mergeBaseVersion, type MergedContent, mergedContent, type Premerged, premerge } from "./stale-merge";
import type { LockedHead, ReadKind } from "../ports/records";
import { isSuspiciousReduction } from "../rules/reduction";
import type { RequestKey } from "../pipeline/idempotency";
import { checkSize, type WriteMode } from "../rules/validate";
import { requireCurrentVersion } from "../rules/versions";
import type { Decision, WriteCommand, WriteEnv, WriteState } from "../pipeline/write-command";

/** The write paths that store content. */
export type ContentPath = "agent-create" | "agent-update" | "agent-edit" | "editor-save";

/** How the new content is formed: given whole, appended, or an exact-text edit of the stored one. */
export type ContentMode = WriteMode | "edit";

/** A content write as checked before the lock (content-request.ts: mode parsed, fields checked). */
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
  /** Merge with what others wrote when expected_version is stale (stale-merge.ts); a replace, create or edit only. */
  readonly merge?: boolean;
}

/** A content write that passed its checks, with the key a retry of it is recognized by. */
export interface CheckedContent {
  readonly write: ContentWrite;
  readonly key: RequestKey | undefined;
}

/**
 * The command of a checked content write: what it reads under the lock, and how it is decided.
 * An append and an editor save read only the metadata (the database composes an append; a save
 * judges nothing by the old text, and so also recovers a plan that cannot be read); a replace and
 * an edit read the contents as well.
 */
export function commandOf(taskId: string, checked: CheckedContent): WriteCommand<ReadKind, WriteResult> {
  const { write, key: request } = checked;
  if (write.mode === "append") {
    const append: WriteCommand<"metadata", WriteResult> = {
      taskId,
      kind: "append",
      reads: "metadata",
      request,
      readFailed: (cause) => planErrors.planReadFailed("append", cause),
      decide: (state, env) => decideAppend(write, state, env),
    };
    return append;
  }
  if (write.path === "editor-save") {
    const save: WriteCommand<"metadata", WriteResult> = {
      taskId,
      kind: "save",
      reads: "metadata",
      request,
      decide: (state, env) => decideSave(write, state, env),
    };
    return save;
  }
  // A write that may merge computes the merge before the lock (stale-merge.ts premerge); the
  // decision reuses it when the transaction reads the same texts.
  let premerged: Premerged | null = null;
  const contentAt = mergeBaseVersion(write);
  const replace: WriteCommand<"content", WriteResult> = {
    taskId,
    kind: write.mode === "edit" ? "edit" : write.path === "agent-create" ? "create" : "replace",
    reads: "content",
    request,
    contentAt,
    ...(contentAt !== undefined && {
      prepare: async (snapshot) => {
        premerged = snapshot === null ? null : await premerge(write, snapshot);
      },
    }),
    decide: (state, env) =>
      write.mode === "edit"
        ? decideEdit(write, state, env, premerged)
        : decideReplace(write, state, env, premerged),
  };
  return replace;
}

/** An editor save: creates or replaces, judged by nothing but its own size (checked before the lock). */
export function decideSave(
  write: ContentWrite,
  state: WriteState<"metadata">,
  env: WriteEnv,
): Promise<Decision<WriteResult>> {
  return commitNew(write, state, env, wholeContent(write.content), null);
}

/**
 * An agent create or replace. Order after the lock: plan existence (replace) -> version rules
 * (seed 003), or the merge of a stale version when asked (then the merged document's size) ->
 * reduction guard -> commit.
 */
export function decideReplace(
  write: ContentWrite,
  state: WriteState<"content">,
  env: WriteEnv,
  premerged: Premerged | null = null,
): Promise<Decision<WriteResult>> {
  requirePlan(write, state);
  const merged = mergedContent(write, state, premerged);
  if (merged === null) checkVersion(write, state);
  const content = wholeContent(merged?.content ?? write.content);
  if (merged !== null) checkMerged(content);
  return commitNew(write, state, env, content, judgeReduction(write, state, content), merged);
}

/**
 * An agent exact-text edit. Order after the lock: plan existence -> version -> exact replacement,
 * empty result, size -> reduction guard -> commit.
 */
export function decideEdit(
  write: ContentWrite,
  state: WriteState<"content">,
  env: WriteEnv,
  premerged: Premerged | null = null,
): Promise<Decision<WriteResult>> {
  const live = requirePlan(write, state);
  // A stale edit asked to merge is applied to the content the caller read, then merged.
  const merged = mergedContent(write, state, premerged);
  if (merged === null) checkVersion(write, state);
  let content = wholeContent(write.content);
  if (live !== null) {
    const edited = merged?.content ?? applyExactEdit(live.content, write.oldText ?? "", write.content);
    content = wholeContent(edited);
    checkMerged(content);
  }
  return commitNew(write, state, env, content, judgeReduction(write, state, content), merged);
}

// What a write's own document met before the lock, its merged (or edited) document meets here:
// not empty, within the size limit.
function checkMerged(content: StoredContent): void {
  if (content.bytes === 0) throw planErrors.contentRequired();
  checkSize(content.bytes);
}

// An agent update or edit needs a live plan; a create or save makes one.
function requirePlan<K extends ReadKind>(write: ContentWrite, state: WriteState<K>): LockedHead<K> | null {
  const { live } = state;
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
  const { live } = state;
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
  merged: MergedContent | null = null,
): Promise<Decision<WriteResult>> {
  const merge = merged?.marker ?? null;
  return commitContent(state, env, {
    title: write.title,
    content,
    author: write.author,
    // An acknowledged reduction goes on a new revision so the prior content stays in its own; a
    // merged write goes on its own revision, which carries its marker.
    forceNewRevision: truncation !== null || merge !== null,
    revertOfRevisionId: null,
    truncation,
    merge,
    mergeMethod: merged?.method ?? null,
  });
}

/**
 * Version rules of seed 003. Agent create: no plan -> creates, unless a (necessarily stale) version
 * is given; a plan -> PLAN_EXISTS without a version, else a conditional replace. Agent replace and
 * edit need the current version (an append, decided in append-decision.ts, checks it only when given).
 * The editor path never does.
 */
function checkVersion(write: ContentWrite, state: WriteState): void {
  if (write.path === "editor-save") return;
  const { live } = state;
  const expected = write.expectedVersion;
  if (live === null) {
    if (expected !== undefined) throw planErrors.versionMismatch();
    return;
  }
  if (expected === undefined && write.path === "agent-create") throw planErrors.planExists(state.taskId);
  requireCurrentVersion(live, expected);
}

// The newest revision holds the HEAD content (HEAD and revision are written in one transaction);
// if it does not, the prior content could not be pointed to, so refuse rather than lose it.
function priorRevision(state: WriteState<"content">): number {
  const { live, latest } = state;
  if (!live || !latest || latest.content !== live.content || latest.title !== live.title) {
    throw new Error("plan history does not hold the current content; refusing an acknowledged reduction");
  }
  return latest.number;
}
