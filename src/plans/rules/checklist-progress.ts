import * as marked from "marked";
import type { MarkedExtension, Token, Tokens } from "marked";
import type { ChecklistCount, ChecklistProgress, StoredChecklist } from "../ports/records";
import { composeAppend } from "./compose";
import { PLAN_MARKDOWN } from "./plan-markdown";

/**
 * A counter of task-list items by `extension`'s rules, made from the marked module. The counter is
 * marked's lexer reading blocks only: whether a list item is a task, and whether it is ticked, is
 * decided by the list tokenizer from the item's lines; the inline text of paragraphs, items and cells
 * (emphasis, links, code spans) decides nothing about blocks, so it is queued and never read here
 * (the slowest inline shapes, 250 KiB of nested emphasis, take a few hundred ms to lex in full).
 *
 * Self-contained (it uses nothing but its parameters), because it also runs from its source text in
 * the thread that counts large plans (src/threads/checklist-thread.ts). Total: should the parser give
 * up on a text (the console then shows it as plain text, without boxes), it has no checklist.
 */
export function checklistCounterOf(
  markedModule: typeof marked,
  extension: MarkedExtension,
): (markdown: string) => ChecklistCount {
  const instance = new markedModule.Marked(extension);
  class BlockLexer extends markedModule.Lexer {
    override inline(_src: string, tokens: Token[] = []): Token[] {
      return tokens;
    }
  }
  return (markdown) => {
    let checked = 0;
    let total = 0;
    try {
      const blocks = new BlockLexer(instance.defaults).lex(markdown);
      instance.walkTokens(blocks, (token) => {
        if (token.type !== "list_item") return;
        const item = token as Tokens.ListItem;
        if (!item.task) return;
        total += 1;
        if (item.checked) checked += 1;
      });
      let end = blocks.length - 1;
      while (end >= 0 && blocks[end]?.type === "space") end -= 1;
      const last = blocks[end];
      const items = last?.type === "list" ? (last as Tokens.List).items : [];
      return { checked, total, lastItem: items[items.length - 1]?.raw ?? null };
    } catch {
      return { checked: 0, total: 0, lastItem: null };
    }
  };
}

/** Counts a plan's task-list items by the rules the console renders them with (plan-markdown.ts). */
export const countChecklist = checklistCounterOf(marked, PLAN_MARKDOWN);

/**
 * The checklist progress of a plan's `markdown`: its task-list items (GFM: an item of any list, `-`,
 * `*`, `+` or `1.`, whose text starts with `[ ]`, `[x]` or `[X]` and a space or tab, then text),
 * ticked and in all, counted by the rules the console renders them with (plan-markdown.ts): nested
 * lists and lists in blockquotes count; a `[x]` in a code block (fenced or indented), in raw HTML, in
 * a code span or in the middle of a line does not; CRLF lines read as LF ones. Each item the console
 * shows as a checkbox is counted once, and nothing else is. Pure and total: it never throws.
 */
export function checklistProgress(markdown: string): ChecklistProgress {
  const { checked, total } = countChecklist(markdown);
  return { checked, total };
}

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
