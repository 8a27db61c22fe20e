import {
  FILE_HEADERS_ONLY,
  formatPatch,
  type StructuredPatch,
  type StructuredPatchHunk,
  structuredPatch,
} from "diff";
import { loopTurns } from "./loop-turns";
import { splitLines } from "../rules/plan-lines";
import { utf8Length } from "../../text/unicode";

/** A line-based unified diff from an old content to a new one, with the sizes the proto reports (PlanDiff). */
export interface PlanDiff {
  readonly unifiedDiff: string;
  readonly oldBytes: number;
  readonly newBytes: number;
  readonly diffBytes: number;
  readonly linesAdded: number;
  readonly linesRemoved: number;
}

/** Lines of context around each change. */
export const DIFF_CONTEXT_LINES = 3;

/**
 * The most edits (lines added plus removed) the minimal diff is searched for; past it the diff
 * replaces every line (still correct, not minimal) and a merge is refused as too different. Bounds
 * the work whatever the text: giving up costs about this squared steps (about 0.25 s at 1,000 on
 * the 2-core machine the benchmarks run on; an ordinary diff of a few changed lines takes a few ms).
 */
export const DIFF_MAX_EDIT_LENGTH = 1_000;

/** The labels of a diff's header lines ("--- <old>", "+++ <new>"). */
export interface DiffLabels {
  readonly old: string;
  readonly new: string;
}

/**
 * The unified diff of the proto's PlanDiff (pure; jsdiff's line diff, ADR 0008): empty when the
 * contents are equal; otherwise "--- old", "+++ new" and hunks with DIFF_CONTEXT_LINES lines of
 * context. Lines are compared with their terminators and nothing is normalized: jsdiff keeps a CRLF
 * line's "\r" in the line (stripTrailingCr is off) and marks a last line without "\n" with
 * "\ No newline at end of file". Synchronous: the twin of unifiedDiffSliced, which the service runs.
 */
export function unifiedDiff(oldText: string, newText: string, labels: DiffLabels): PlanDiff {
  if (oldText === newText) return planDiffOf(oldText, newText, null);
  const patch =
    structuredPatch(labels.old, labels.new, oldText, newText, undefined, undefined, {
      context: DIFF_CONTEXT_LINES,
      maxEditLength: DIFF_MAX_EDIT_LENGTH,
    }) ?? wholeReplacement(labels, oldText, newText);
  return planDiffOf(oldText, newText, patch);
}

/**
 * unifiedDiff, computed in slices between turns of the event loop (issue 54: the rule that no
 * request holds the loop for long): jsdiff's asynchronous mode runs one edit length of its search
 * per timer tick, so a diff that gives up at DIFF_MAX_EDIT_LENGTH (about 0.25 s of work) lets other
 * callers run about a thousand times in between instead of waiting for it; only the linear parts
 * (splitting lines, building the patch text) run in one piece, each on a turn of the loop of its own
 * (loop-turns.ts), so concurrent diffs do not run theirs back to back. The same algorithm and bound as
 * unifiedDiff, so the same result (test/unit/changes/unified-diff.test.ts compares them).
 */
export async function unifiedDiffSliced(
  oldText: string,
  newText: string,
  labels: DiffLabels,
): Promise<PlanDiff> {
  if (oldText === newText) return planDiffOf(oldText, newText, null);
  await loopTurns.turn(); // splitting both texts into lines
  const patch = await new Promise<StructuredPatch | undefined>((resolve) => {
    structuredPatch(labels.old, labels.new, oldText, newText, undefined, undefined, {
      context: DIFF_CONTEXT_LINES,
      maxEditLength: DIFF_MAX_EDIT_LENGTH,
      callback: resolve,
    });
  });
  await loopTurns.turn(); // building the patch text
  return planDiffOf(oldText, newText, patch ?? wholeReplacement(labels, oldText, newText));
}

// The PlanDiff of a patch (null: the contents are equal).
function planDiffOf(oldText: string, newText: string, patch: StructuredPatch | null): PlanDiff {
  const sizes = { oldBytes: utf8Length(oldText), newBytes: utf8Length(newText) };
  if (patch === null) return { unifiedDiff: "", ...sizes, diffBytes: 0, linesAdded: 0, linesRemoved: 0 };
  const text = formatPatch(patch, FILE_HEADERS_ONLY);
  let linesAdded = 0;
  let linesRemoved = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) linesAdded++;
      else if (line.startsWith("-")) linesRemoved++;
    }
  }
  return { unifiedDiff: text, ...sizes, diffBytes: utf8Length(text), linesAdded, linesRemoved };
}

// The diff that removes every old line and adds every new one, in jsdiff's patch form (its lines
// without their "\n", a last line without one followed by the no-newline marker).
function wholeReplacement(labels: DiffLabels, oldText: string, newText: string): StructuredPatch {
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  const hunk: StructuredPatchHunk = {
    oldStart: oldLines.length === 0 ? 0 : 1,
    oldLines: oldLines.length,
    newStart: newLines.length === 0 ? 0 : 1,
    newLines: newLines.length,
    lines: [...patchLines("-", oldLines), ...patchLines("+", newLines)],
  };
  return {
    oldFileName: labels.old,
    newFileName: labels.new,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [hunk],
  };
}

function patchLines(sign: "-" | "+", lines: readonly string[]): string[] {
  return lines.flatMap((line) =>
    line.endsWith("\n") ? [sign + line.slice(0, -1)] : [sign + line, "\\ No newline at end of file"],
  );
}
