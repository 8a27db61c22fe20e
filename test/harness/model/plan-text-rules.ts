import { isAllWhiteSpace, isWhiteSpaceCodePoint } from "./unicode-white-space";

/**
 * The text rules of the seeds, written again for the differential test from the requirements alone
 * (seed 000 REQ-TASKS-PLAN-APPEND-002, seed 001 "Separator normalization", DESIGN.md constants):
 * never imported from src/, so a shared mistake cannot hide.
 */

/** Size limit in UTF-8 bytes; exactly the limit is accepted. */
export const LIMIT_BYTES = 262_144;
/** The reduction guard judges only prior contents of at least this many code points. */
export const REDUCTION_MIN_PRIOR_CHARS = 2_000;

/** UTF-8 length. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Length in Unicode code points. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _char of text) count++;
  return count;
}

/** `text` without its trailing White_Space (seed 001 step 1: S'). */
export function withoutTrailingWhiteSpace(text: string): string {
  const chars = [...text];
  let end = chars.length;
  while (end > 0 && isWhiteSpaceCodePoint(chars[end - 1]?.codePointAt(0) ?? -1)) end--;
  return chars.slice(0, end).join("");
}

/**
 * `fragment` without its leading empty and whitespace-only lines (seed 001 step 2: F'). A line ends
 * at "\n" ("\r\n" included, "\r" being whitespace); the first line holding a non-whitespace character
 * is kept verbatim, leading spaces and tabs included. U+2028, U+0085 and a lone "\r" end no line.
 */
export function withoutLeadingBlankLines(fragment: string): string {
  let start = 0;
  for (;;) {
    const newline = fragment.indexOf("\n", start);
    if (newline === -1) return fragment.slice(start);
    if (!isAllWhiteSpace(fragment.slice(start, newline))) return fragment.slice(start);
    start = newline + 1;
  }
}

/** The composed content of an append: S' alone is F'; otherwise S' + "\n\n" + F' (seed 001 steps 3, 4). */
export function appendedContent(stored: string, fragment: string): string {
  const head = withoutTrailingWhiteSpace(stored);
  const tail = withoutLeadingBlankLines(fragment);
  return head === "" ? tail : `${head}\n\n${tail}`;
}

/** True when an append fragment is blank (AC-TASKS-PLAN-APPEND-001.5: whitespace throughout). */
export function isBlankFragment(fragment: string): boolean {
  return isAllWhiteSpace(fragment);
}

/** Occurrences of `needle` in `text`, overlapping ones included ("aaa" holds "aa" twice). */
export function occurrences(text: string, needle: string): number {
  if (needle === "") return 0; // an empty old_text is rejected before anything is counted
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) count++;
  return count;
}

/** The reduction guard: prior >= 2,000 code points and the new content keeps strictly less than half. */
export function isSuspiciousReduction(priorChars: number, newChars: number): boolean {
  return priorChars >= REDUCTION_MIN_PRIOR_CHARS && newChars * 2 < priorChars;
}

/** What GetPlan with offset/limit (code points) answers for `content`, or null when offset is past the end. */
export function partialRead(
  content: string,
  offset: number,
  limit: number | undefined,
): { content: string; hasMore: boolean; nextOffset: number | undefined } | null {
  const chars = [...content];
  if (offset > chars.length) return null;
  const end = limit === undefined ? chars.length : Math.min(chars.length, offset + limit);
  const hasMore = end < chars.length;
  return { content: chars.slice(offset, end).join(""), hasMore, nextOffset: hasMore ? end : undefined };
}
