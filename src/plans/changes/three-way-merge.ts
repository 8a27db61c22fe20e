import { type ChangeObject, diffArrays } from "diff";
import { loopTurns } from "./loop-turns";
import { joinLines, splitLines } from "../rules/plan-lines";
import { DIFF_MAX_EDIT_LENGTH } from "./unified-diff";

/**
 * The line-based three-way merge of a stale write (proto: "Merging a stale write"; ADR 0008), pure.
 * Lines as plan-lines.ts splits them: compared exactly, terminators included, nothing normalized
 * (Unicode White_Space is significant like any character). Each side's changes against the base
 * come from jsdiff's line diff (Myers); the two are merged by diff3's rule with one difference
 * made for plans (issue 56), where the writes two parties make at once are mostly edits of
 * neighbouring lines (two ticked boxes of a checklist):
 * - a change is a base range [start, end) one side replaced with its lines (an insertion: start = end);
 * - changes of the two sides whose base ranges overlap form one region, extended until no change of
 *   either side overlaps it. Ranges that only touch (one ends where the other starts) do not overlap,
 *   so changes to neighbouring lines merge (diff3 and git make them one region and a conflict);
 *   an insertion overlaps a replaced range only strictly inside it, and an insertion at the start or
 *   end of the other side's replacement goes before or after it;
 * - a region changed by one side only takes that side's lines; changed by both, it takes their lines
 *   once when both give the same lines; two different insertions at the same place (both appending
 *   at the end, the common case) take theirs' lines, then ours, the order an append after theirs
 *   would give; any other region both changed differently is a conflict.
 * So a clean merge keeps every line theirs added or changed: a region takes theirs' lines whenever
 * theirs changed it (test/unit/changes/three-way-merge.test.ts checks it on random inputs).
 */

/** One conflicting region: the base lines from `baseStart` (0-based) and each side's lines there. */
export interface ConflictRegion {
  readonly baseStart: number;
  readonly base: readonly string[];
  readonly ours: readonly string[];
  readonly theirs: readonly string[];
}

export type MergeResult =
  | { readonly merged: true; readonly content: string }
  | {
      readonly merged: false;
      readonly conflicts: readonly ConflictRegion[];
      /** The sides differ from the base too much to diff quickly: one region holds everything. */
      readonly tooDifferent: boolean;
    };

/** A side's change: base lines [start, end) replaced by `lines`. */
interface Change {
  readonly start: number;
  readonly end: number;
  readonly lines: readonly string[];
}

/**
 * Merges `ours` and `theirs`, both derived from `base` (see the module comment). Synchronous: the
 * twin of mergeThreeWaySliced, which the service runs.
 */
export function mergeThreeWay(base: string, ours: string, theirs: string): MergeResult {
  const lines = linesOf(base, ours, theirs);
  const diff = (side: string[]) => diffArrays(lines.base, side, { maxEditLength: DIFF_MAX_EDIT_LENGTH });
  return mergeLines(lines, diff(lines.ours), diff(lines.theirs));
}

/**
 * mergeThreeWay with each side's diff computed in slices between turns of the event loop (jsdiff's
 * asynchronous mode, as unifiedDiffSliced: issue 54's rule that no request holds the loop for long;
 * a merge of two sides that give up at DIFF_MAX_EDIT_LENGTH is twice a diff's work). The two diffs
 * run one after the other, so one merge holds one diff's memory at a time; the linear pieces around
 * them each take a turn of the loop of their own (loop-turns.ts). Same result as
 * mergeThreeWay (test/unit/changes/three-way-merge.test.ts compares them).
 */
export async function mergeThreeWaySliced(base: string, ours: string, theirs: string): Promise<MergeResult> {
  await loopTurns.turn(); // splitting the three texts into lines
  const lines = linesOf(base, ours, theirs);
  const oursParts = await diffSliced(lines.base, lines.ours);
  const theirsParts = await diffSliced(lines.base, lines.theirs);
  await loopTurns.turn(); // the merge of the two diffs, linear in the lines
  return mergeLines(lines, oursParts, theirsParts);
}

interface MergeLines {
  readonly base: string[];
  readonly ours: string[];
  readonly theirs: string[];
}

type Parts = ChangeObject<string[]>[] | undefined;

function linesOf(base: string, ours: string, theirs: string): MergeLines {
  return { base: splitLines(base), ours: splitLines(ours), theirs: splitLines(theirs) };
}

async function diffSliced(base: string[], side: string[]): Promise<Parts> {
  await loopTurns.turn(); // the diff's set-up, linear in the lines
  return new Promise((resolve) => {
    diffArrays(base, side, { maxEditLength: DIFF_MAX_EDIT_LENGTH, callback: resolve });
  });
}

// The merge of the sides' line diffs against the base (undefined: a side too different to diff).
function mergeLines(lines: MergeLines, oursParts: Parts, theirsParts: Parts): MergeResult {
  const { base: baseLines, ours: oursLines, theirs: theirsLines } = lines;
  const oursChanges = changesOf(oursParts);
  const theirsChanges = changesOf(theirsParts);
  if (oursChanges === null || theirsChanges === null) {
    const everything = { baseStart: 0, base: baseLines, ours: oursLines, theirs: theirsLines };
    return { merged: false, conflicts: [everything], tooDifferent: true };
  }
  const out: string[] = [];
  const conflicts: ConflictRegion[] = [];
  let copied = 0;
  let o = 0;
  let t = 0;
  while (o < oursChanges.length || t < theirsChanges.length) {
    // The region starts at the earliest change left and grows while a change of either side overlaps it.
    const first = earliest(oursChanges[o], theirsChanges[t]);
    const start = first.start;
    let end = first.end;
    const oursIn: Change[] = [];
    const theirsIn: Change[] = [];
    for (let grew = true; grew;) {
      grew = false;
      for (; o < oursChanges.length && overlaps(oursChanges[o] as Change, start, end); o++, grew = true) {
        oursIn.push(oursChanges[o] as Change);
        end = Math.max(end, (oursChanges[o] as Change).end);
      }
      for (; t < theirsChanges.length && overlaps(theirsChanges[t] as Change, start, end); t++, grew = true) {
        theirsIn.push(theirsChanges[t] as Change);
        end = Math.max(end, (theirsChanges[t] as Change).end);
      }
    }
    out.push(...baseLines.slice(copied, start));
    copied = end;
    const region = baseLines.slice(start, end);
    const oursRegion = applyChanges(region, start, oursIn);
    const theirsRegion = applyChanges(region, start, theirsIn);
    let taken: string[] | null = null;
    if (oursIn.length === 0 || sameLines(oursRegion, theirsRegion)) taken = theirsRegion;
    else if (theirsIn.length === 0) taken = oursRegion;
    else if (start === end) taken = [...theirsRegion, ...oursRegion]; // two insertions at one place
    // A line without its terminator can only end the document: lines after it would join it.
    const more = o < oursChanges.length || t < theirsChanges.length || end < baseLines.length;
    if (taken !== null && !(more && endsUnterminated(taken)) && !joinsUnterminated(taken)) out.push(...taken);
    else conflicts.push({ baseStart: start, base: region, ours: oursRegion, theirs: theirsRegion });
  }
  if (conflicts.length > 0) return { merged: false, conflicts, tooDifferent: false };
  out.push(...baseLines.slice(copied));
  return { merged: true, content: joinLines(out) };
}

// A side's changes against the base, in base order, from its line diff (null: too many to diff
// quickly). Consecutive removed and added runs at one place are one change.
function changesOf(parts: Parts): Change[] | null {
  if (parts === undefined) return null;
  const changes: Change[] = [];
  let at = 0;
  let pending: { start: number; end: number; lines: string[] } | null = null;
  for (const part of parts) {
    if (!part.added && !part.removed) {
      if (pending) changes.push(pending);
      pending = null;
      at += part.count;
      continue;
    }
    pending ??= { start: at, end: at, lines: [] };
    if (part.removed) {
      at += part.count;
      pending.end = at;
    } else pending.lines.push(...part.value);
  }
  if (pending) changes.push(pending);
  return changes;
}

// The change that starts first; at one place an insertion comes first (it goes before the lines
// the other replaces there).
function earliest(a: Change | undefined, b: Change | undefined): Change {
  if (a === undefined) return b as Change;
  if (b === undefined) return a;
  return b.start < a.start || (b.start === a.start && b.end < a.end) ? b : a;
}

// Whether a change belongs to the region [start, end): its range overlaps the region's. A region
// that is an insertion (start = end) holds only the insertions at its place; an insertion belongs to
// a replaced range only strictly inside it; ranges that only touch stay apart.
function overlaps(change: Change, start: number, end: number): boolean {
  if (start === end) return change.start === start && change.end === start;
  if (change.start === change.end) return change.start > start && change.start < end;
  return change.start < end;
}

// The region's lines (base lines from `offset`) with a side's changes in it applied.
function applyChanges(region: readonly string[], offset: number, changes: readonly Change[]): string[] {
  const out: string[] = [];
  let at = 0;
  for (const change of changes) {
    out.push(...region.slice(at, change.start - offset), ...change.lines);
    at = change.end - offset;
  }
  out.push(...region.slice(at));
  return out;
}

function endsUnterminated(lines: readonly string[]): boolean {
  const last = lines[lines.length - 1];
  return last !== undefined && !last.endsWith("\n");
}

// Whether a line other than the last lacks its terminator (theirs' insertion ending the document
// without one, followed by ours'): the lines would run together.
function joinsUnterminated(lines: readonly string[]): boolean {
  return lines.slice(0, -1).some((line) => !line.endsWith("\n"));
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i]);
}
