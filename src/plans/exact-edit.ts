import { planErrors } from "./errors";

/**
 * Occurrences of `needle` in `text`, overlapping ones included ("aaa" holds "aa" twice). Matching is
 * on exact UTF-16 units of valid text, which equals matching code points: a valid needle cannot
 * start on the low half of a surrogate pair, so an astral character is never split.
 */
export function countOccurrences(text: string, needle: string): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    if (count === 0) first = at;
    count++;
  }
  return { count, first };
}

/**
 * Replaces the single occurrence of `oldText` with `newText`, with no whitespace or line-ending
 * normalization. EDIT_TEXT_NOT_FOUND when absent, EDIT_TEXT_NOT_UNIQUE (with the count) when
 * ambiguous.
 */
export function applyExactEdit(content: string, oldText: string, newText: string): string {
  const { count, first } = countOccurrences(content, oldText);
  if (count === 0) throw planErrors.editTextNotFound();
  if (count > 1) throw planErrors.editTextNotUnique(count);
  return content.slice(0, first) + newText + content.slice(first + oldText.length);
}
