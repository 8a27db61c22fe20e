import type { ChecklistCount, StoredChecklist } from "../ports/records";
import { composeAppend } from "./compose";

// The checklist of an append's result, from the stored content's and the fragment's own, so that an
// append never reads the plan it adds to (compose.ts): pure rules over counts made by
// checklist-progress.ts.

/** The item appended (as an append composes) to learn whether a text ends open. */
export const END_PROBE = "- [ ] end";

/** What to count to learn `content`'s stored checklist in one pass: it, then END_PROBE appended. */
export function probedText(content: string): string {
  return composeAppend(content, END_PROBE);
}

/**
 * `probedText(content)`'s count read back: when the probe stayed an item of its own at the end, the
 * content ends closed and its progress is the count without the probe; null when the probe was taken
 * into the content's last block (it ends open: count the content alone, then `openEnd` is true).
 */
export function closedChecklist(probed: ChecklistCount): StoredChecklist | null {
  if (probed.lastItem?.trimEnd() !== END_PROBE) return null;
  return { checked: probed.checked, total: probed.total - 1, openEnd: false };
}

/**
 * The stored checklist after an append of `fragment` (already without its leading blank lines, as
 * compose.ts keeps it) to content whose stored checklist is `stored` (null: not counted), from the
 * fragment's own: their sum, when the result is the stored blocks then the fragment's (the content
 * is empty, or it ends closed and the fragment's first line is not indented, which after the blank
 * line of the separator could continue the content's last list item or code block). Null when the
 * result must be counted whole.
 */
export function appendedChecklist(
  stored: StoredChecklist | null,
  storedEmpty: boolean,
  fragment: string,
  own: StoredChecklist,
): StoredChecklist | null {
  if (storedEmpty) return own;
  if (stored === null || stored.openEnd || /^[ \t]/.test(fragment)) return null;
  return { checked: stored.checked + own.checked, total: stored.total + own.total, openEnd: own.openEnd };
}
