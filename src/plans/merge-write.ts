import { planErrors } from "./errors";
import { applyExactEdit } from "./exact-edit";
import { renderConflicts } from "./merge-conflicts";
import type { MergeMarker } from "./ports/records";
import { mergeThreeWay } from "./three-way-merge";
import type { WriteState } from "./write-command";

/** What a merge needs of a content write (content-write.ts ContentWrite). */
export interface MergeRequest {
  readonly merge?: boolean;
  readonly mode: string;
  readonly expectedVersion: number | undefined;
  /** Edit only: the exact text `content` replaces. */
  readonly oldText?: string;
  readonly content: string;
}

/** The content a merged write stores, and the versions it merged over. */
export interface MergedContent {
  readonly content: string;
  readonly marker: MergeMarker;
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
 * The merge of a stale replace, create or edit (proto "Merging a stale write"), pure: null when it
 * does not merge (merge not asked, no live plan, or expected_version current: an ordinary write).
 * Otherwise base = the content at expected_version as read under the lock (HISTORY_UNAVAILABLE when
 * it could not be derived), ours = the caller's document, or its edit applied to the base (old_text
 * counted there: EDIT_TEXT_NOT_FOUND / EDIT_TEXT_NOT_UNIQUE), theirs = the current content; a
 * conflict is MERGE_CONFLICT with the bounded regions. The caller then holds the merged content to
 * every rule of an ordinary write of it.
 */
export function mergedContent(write: MergeRequest, state: WriteState<"content">): MergedContent | null {
  const { live, atVersion } = state;
  const expected = write.expectedVersion;
  if (!write.merge || live === null || expected === undefined || expected === live.version) return null;
  if (atVersion === null || atVersion.version !== expected)
    throw new Error("a merge decided without the content at its expected_version");
  if (!atVersion.derivable)
    throw planErrors.historyUnavailable("merge", expected, live.version, atVersion.oldestVersion);
  const base = atVersion.content;
  const ours =
    write.mode === "edit" ? applyExactEdit(base, write.oldText ?? "", write.content) : write.content;
  const result = mergeThreeWay(base, ours, live.content);
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
  return { content: result.content, marker: { fromVersion: expected, toVersion: live.version } };
}
