import { planErrors } from "../errors";
import { applyExactEdit, countOccurrences } from "../rules/exact-edit";
import { renderConflicts } from "../changes/merge-conflicts";
import type { HeadRecord, MergeMarker, MergeMethod, VersionContent } from "../ports/records";
import { type MergeResult, mergeThreeWay, mergeThreeWaySliced } from "../changes/three-way-merge";
import { PreparationStale, type WriteSnapshot, type WriteState } from "../pipeline/write-command";

/** What a merge needs of a content write (content-decision.ts ContentWrite). */
export interface MergeRequest {
  readonly merge?: boolean;
  readonly mode: string;
  readonly expectedVersion: number | undefined;
  /** Edit only: the exact text `content` replaces. */
  readonly oldText?: string;
  readonly content: string;
}

/** The content a merged write stores, the versions it merged over, and how it merged. */
export interface MergedContent {
  readonly content: string;
  readonly marker: MergeMarker;
  readonly method: MergeMethod;
}

/**
 * The version a content write needs the content of (its merge's base): expected_version when the
 * write asked to merge and gave one. Read under the lock whatever it turns out to be; the merge
 * happens only when it is stale (mergedContent).
 */
export function mergeBaseVersion(write: MergeRequest): number | undefined {
  return write.merge && write.mode !== "append" ? write.expectedVersion : undefined;
}

/**
 * A merge prepared before the write's lock (premerge) on a snapshot: the three texts it merged and
 * the result (both null when the snapshot did not merge, or refused it), which the decision in the
 * transaction reuses when it reads the same three texts.
 */
export interface Premerged {
  readonly texts: MergeTexts | null;
  readonly result: MergeResult | null;
}

/**
 * The merge of a stale write on a snapshot read before the lock, computed in slices between turns
 * of the event loop (mergeThreeWaySliced; issue 54: a merge of two 256 KiB sides that differ
 * everywhere is about 0.3 s of work). It holds neither the task's lock nor a database connection
 * (SQLite has one) while it runs. A snapshot that would not merge, or would be refused, prepares
 * nothing: the decision in the transaction then decides, and refuses, as always.
 */
export async function premerge(write: MergeRequest, snapshot: WriteSnapshot): Promise<Premerged> {
  let texts: MergeTexts | null;
  try {
    texts = mergeTexts(write, snapshot.live, snapshot.atVersion);
  } catch {
    return { texts: null, result: null };
  }
  if (texts === null) return { texts: null, result: null };
  // An edit that re-applies needs no line merge (if it no longer does under the lock, the decision
  // finds nothing prepared and the pipeline prepares again).
  if (reappliedEdit(write, texts.theirs) !== null) return { texts, result: null };
  return { texts, result: await mergeThreeWaySliced(texts.base, texts.ours, texts.theirs) };
}

/**
 * The merge of a stale replace, create or edit (proto "Merging a stale write"), pure: null when it
 * does not merge (merge not asked, no live plan, or expected_version current: an ordinary write).
 * Otherwise base = the content at expected_version as read under the lock (HISTORY_UNAVAILABLE when
 * it could not be derived), ours = the caller's document, or its edit applied to the base (old_text
 * counted there: EDIT_TEXT_NOT_FOUND / EDIT_TEXT_NOT_UNIQUE), theirs = the current content. An edit
 * whose old_text occurs exactly once in theirs too is re-applied there (method `edit`: what a fresh
 * edit after a re-read would do); any other write is line-merged (method `lines`), a conflict being
 * MERGE_CONFLICT with the bounded regions. The caller then holds the merged content to
 * every rule of an ordinary write of it. The merge itself is `premerged`'s, prepared before the lock;
 * when that merged other texts (a write landed in between) the decision throws PreparationStale
 * and the pipeline prepares again. Only a write never prepared (its snapshot read failed, or a
 * test's direct call) merges here, in one piece, bounded by DIFF_MAX_EDIT_LENGTH.
 */
export function mergedContent(
  write: MergeRequest,
  state: WriteState<"content">,
  premerged: Premerged | null = null,
): MergedContent | null {
  const { live, atVersion } = state;
  const expected = write.expectedVersion;
  const texts = mergeTexts(write, live, atVersion);
  if (texts === null || live === null || expected === undefined) return null;
  const { base, ours, theirs } = texts;
  const marker = { fromVersion: expected, toVersion: live.version };
  const reapplied = reappliedEdit(write, theirs);
  if (reapplied !== null) return { content: reapplied, marker, method: "edit" };
  let result: MergeResult;
  if (premerged === null) result = mergeThreeWay(base, ours, theirs);
  else if (premerged.result !== null && sameTexts(premerged.texts, texts)) result = premerged.result;
  else throw new PreparationStale();
  if (!result.merged) {
    const { conflicts, tooDifferent } = result;
    throw planErrors.mergeConflict(
      expected,
      live.version,
      conflicts.length,
      renderConflicts(conflicts),
      tooDifferent,
    );
  }
  return { content: result.content, marker, method: "lines" };
}

/**
 * A stale exact edit re-applied to the current content `theirs`: null unless it is an edit whose
 * old_text occurs there exactly once (it occurred exactly once in the content the caller read too,
 * or mergeTexts refused it already, so the caller never edits text it did not see). Linear in the
 * plan and old_text (countOccurrences).
 */
export function reappliedEdit(write: MergeRequest, theirs: string): string | null {
  if (write.mode !== "edit") return null;
  const oldText = write.oldText ?? "";
  const { count, first } = countOccurrences(theirs, oldText);
  if (count !== 1) return null;
  return theirs.slice(0, first) + write.content + theirs.slice(first + oldText.length);
}

/** The three texts of a merge: the base, the caller's side and the current content. */
export interface MergeTexts {
  readonly base: string;
  readonly ours: string;
  readonly theirs: string;
}

function sameTexts(a: MergeTexts | null, b: MergeTexts): boolean {
  return a !== null && a.base === b.base && a.ours === b.ours && a.theirs === b.theirs;
}

// The three texts of a merge (null: the write does not merge), with its refusals before the merge.
function mergeTexts(
  write: MergeRequest,
  live: Pick<HeadRecord, "version" | "content"> | null,
  atVersion: VersionContent | null,
): MergeTexts | null {
  const expected = write.expectedVersion;
  if (!write.merge || live === null || expected === undefined || expected === live.version) return null;
  if (atVersion === null || atVersion.version !== expected)
    throw new Error("a merge decided without the content at its expected_version");
  if (!atVersion.derivable)
    throw planErrors.historyUnavailable("merge", expected, live.version, atVersion.oldestVersion);
  const base = atVersion.content;
  const ours =
    write.mode === "edit" ? applyExactEdit(base, write.oldText ?? "", write.content) : write.content;
  return { base, ours, theirs: live.content };
}
