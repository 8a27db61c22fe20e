import { Lexer, Marked, type Token, type Tokens } from "marked";
import { PLAN_MARKDOWN } from "./plan-markdown";

/** How much of a plan's checklist is done. */
export interface ChecklistProgress {
  /** Task-list items ticked: `- [x]` or `- [X]`. */
  readonly checked: number;
  /** Task-list items, ticked or not. */
  readonly total: number;
}

const marked = new Marked(PLAN_MARKDOWN);

/**
 * marked's lexer reading a plan's blocks only. Whether a list item is a task, and whether it is
 * ticked, is decided by the list tokenizer from the item's lines; the inline text of paragraphs,
 * items and cells (emphasis, links, code spans) decides nothing about blocks, so it is queued and
 * never read here. The blocks are exactly those the console renders (plan-markdown.ts); skipping the
 * inline pass makes a count cost a fraction of a render (the slowest inline shapes, 250 KiB of
 * nested emphasis, take a few hundred ms to lex in full).
 */
class BlockLexer extends Lexer {
  override inline(_src: string, tokens: Token[] = []): Token[] {
    return tokens;
  }
}

/**
 * The checklist progress of a plan's `markdown`: its task-list items (GFM: an item of any list, `-`,
 * `*`, `+` or `1.`, whose text starts with `[ ]`, `[x]` or `[X]` and a space or tab, then text),
 * ticked and in all, counted by the rules the console renders them with (plan-markdown.ts): nested
 * lists and lists in blockquotes count; a `[x]` in a code block (fenced or indented), in raw HTML, in
 * a code span or in the middle of a line does not; CRLF lines read as LF ones. Each item the console
 * shows as a checkbox is counted once, and nothing else is.
 *
 * Pure and total: it never throws. Should the parser give up on a plan (the console then shows it as
 * plain text, without boxes), the plan has no checklist: `{ checked: 0, total: 0 }`.
 */
export function checklistProgress(markdown: string): ChecklistProgress {
  let checked = 0;
  let total = 0;
  try {
    const blocks = new BlockLexer(marked.defaults).lex(markdown);
    marked.walkTokens(blocks, (token) => {
      if (token.type !== "list_item") return;
      const item = token as Tokens.ListItem;
      if (!item.task) return;
      total += 1;
      if (item.checked) checked += 1;
    });
  } catch {
    return { checked: 0, total: 0 };
  }
  return { checked, total };
}
