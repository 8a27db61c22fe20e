import { type ChangeObject, diffArrays } from "diff";
import { loopTurns } from "./loop-turns";
import { joinLines, splitLines } from "../rules/plan-lines";
import { DIFF_MAX_EDIT_LENGTH } from "./unified-diff";

/**
 * The line-based three-way merge of a stale write (proto: "Merging a stale write"; ADR 0008), pure.
 * Lines as plan-lines.ts splits them: compared exactly, terminators included, nothing normalized
 * (Unicode White_Space is significant like any character). Each side's changes against the base
 * come from jsdiff's line diff (Myers); the merge of the two is diff3's:
 * - a change is a base range [start, end) one side replaced with its lines (an insertion: start = end);
 * - changes of the two sides whose base ranges overlap or touch (one ends where the other starts)
 *   form one region, extended until no change of either side touches it;
 * - a region changed by one side only takes that side's lines; changed by both, it takes their lines
 *   once when both give the same lines, else it is a conflict.
 * So a clean merge keeps every line theirs added: a region takes theirs' lines whenever theirs
 * changed it (test/unit/three-way-merge.test.ts checks it on random inputs).
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
 * mergeThreeWay (test/unit/three-way-merge.test.ts compares them).
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
    // The region starts at the earliest change left and grows while a change of either side touches it.
    const first = earliest(oursChanges[o], theirsChanges[t]);
    let end = first.end;
    const oursIn: Change[] = [];
    const theirsIn: Change[] = [];
    for (let grew = true; grew;) {
      grew = false;
      for (; o < oursChanges.length && (oursChanges[o] as Change).start <= end; o++, grew = true) {
        oursIn.push(oursChanges[o] as Change);
        end = Math.max(end, (oursChanges[o] as Change).end);
      }
      for (; t < theirsChanges.length && (theirsChanges[t] as Change).start <= end; t++, grew = true) {
        theirsIn.push(theirsChanges[t] as Change);
        end = Math.max(end, (theirsChanges[t] as Change).end);
      }
    }
    const start = first.start;
    out.push(...baseLines.slice(copied, start));
    copied = end;
    const region = baseLines.slice(start, end);
    const oursRegion = applyChanges(region, start, oursIn);
    const theirsRegion = applyChanges(region, start, theirsIn);
    if (oursIn.length === 0 || sameLines(oursRegion, theirsRegion)) out.push(...theirsRegion);
    else if (theirsIn.length === 0) out.push(...oursRegion);
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

function earliest(a: Change | undefined, b: Change | undefined): Change {
  if (a === undefined) return b as Change;
  if (b === undefined) return a;
  return b.start < a.start ? b : a;
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

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i]);
}
