import { planErrors } from "../errors";

/**
 * Occurrences of `needle` in `text`, overlapping ones included ("aaa" holds "aa" twice), and where
 * the first starts (-1 for none). Matching is on exact UTF-16 units of valid text, which equals
 * matching code points: a valid needle cannot start on the low half of a surrogate pair, so an
 * astral character is never split.
 *
 * Linear whatever the input, O(text + needle) (Knuth-Morris-Pratt): the count is part of the
 * contract (EDIT_TEXT_NOT_UNIQUE's metadata `occurrences`), and counting with repeated indexOf costs
 * O(text x needle) on a repeated letter (issue 54: 262,144 "a" and an old_text of 131,072 "a" held
 * the event loop for 11.8 s).
 */
export function countOccurrences(text: string, needle: string): { count: number; first: number } {
  const m = needle.length;
  if (m === 0 || m > text.length) return { count: 0, first: -1 };
  const fail = failureTable(needle);
  let count = 0;
  let first = -1;
  let matched = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    while (matched > 0 && needle.charCodeAt(matched) !== code) matched = fail[matched - 1] as number;
    if (needle.charCodeAt(matched) === code) matched++;
    if (matched === m) {
      if (count === 0) first = i - m + 1;
      count++;
      // An overlapping occurrence may start inside this one: continue from its longest border.
      matched = fail[m - 1] as number;
    }
  }
  return { count, first };
}

// KMP's failure table: fail[i] is the length of the longest proper prefix of needle[0..i] that is
// also its suffix.
function failureTable(needle: string): Int32Array {
  const fail = new Int32Array(needle.length);
  let k = 0;
  for (let i = 1; i < needle.length; i++) {
    const code = needle.charCodeAt(i);
    while (k > 0 && needle.charCodeAt(k) !== code) k = fail[k - 1] as number;
    if (needle.charCodeAt(k) === code) k++;
    fail[i] = k;
  }
  return fail;
}

/**
 * Replaces the single occurrence of `oldText` with `newText`, with no whitespace or line-ending
 * normalization. EDIT_TEXT_NOT_FOUND when absent, EDIT_TEXT_NOT_UNIQUE (with the count) when
 * ambiguous. Linear in the plan and old_text (countOccurrences).
 */
export function applyExactEdit(content: string, oldText: string, newText: string): string {
  const { count, first } = countOccurrences(content, oldText);
  if (count === 0) throw planErrors.editTextNotFound();
  if (count > 1) throw planErrors.editTextNotUnique(count);
  return content.slice(0, first) + newText + content.slice(first + oldText.length);
}
