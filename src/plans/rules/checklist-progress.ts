import * as marked from "marked";
import type { MarkedExtension, Token, Tokens } from "marked";
import type { ChecklistCount, ChecklistProgress } from "../ports/records";
import { PLAN_MARKDOWN } from "./plan-markdown";

/**
 * A counter of task-list items by `extension`'s rules, made from the marked module. The counter is
 * marked's lexer reading blocks only: whether a list item is a task, and whether it is ticked, is
 * decided by the list tokenizer from the item's lines; the inline text of paragraphs, items and cells
 * (emphasis, links, code spans) decides nothing about blocks, so it is queued and never lexed here
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
  // The inline work is queued as marked queues it (its block tokenizers amend the queue's last
  // entry as a paragraph grows: an override of the queuing broke on a lazy continuation line), and
  // the queue is then never read.
  class BlockLexer extends markedModule.Lexer {
    override inlineTokens(_src: string, tokens: Token[] = []): Token[] {
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
