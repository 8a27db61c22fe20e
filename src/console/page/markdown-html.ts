import { Marked, type Tokens } from "marked";
import { PLAN_MARKDOWN } from "../../plans/rules/plan-markdown";

// A plan's markdown as HTML, before sanitizing (markdown.ts): pure, no DOM, unit-tested in Node
// (test/unit/console/console-markdown.test.ts). The markdown is read by the plan's own rules
// (src/plans/rules/plan-markdown.ts: GFM, containers nested at most MAX_NESTING deep, deeper markers
// shown as text), those the checklist progress counts with. Two rules make the console show what the
// plan says, no more and no less (docs/console.md, "Rendering rules"):
// - Raw HTML in a plan is shown as the text it is, never parsed: an unclosed <style>, <xmp>,
//   <plaintext>, <template> or <!-- cannot swallow the lines after it, and a plan cannot name
//   (id, name) or hide anything. The one exception is a line break, <br>, which cannot hold text.
// - A task-list item's box is no HTML of the plan's: marked's checkbox token becomes an empty
//   placeholder, <span class="task-box"> (with "task-done" when ticked), which markdown.ts replaces
//   after sanitizing with a disabled checkbox it makes itself. The sanitizer lets no <input> through.

export { MAX_NESTING } from "../../plans/rules/plan-markdown";

/** The class of a task-list item's placeholder, and of a ticked one's (markdown.ts makes the box). */
export const TASK_BOX_CLASS = "task-box";
/** The class a ticked task-list item's placeholder carries besides TASK_BOX_CLASS. */
export const TASK_DONE_CLASS = "task-done";

const LINE_BREAK = /^<br\s*\/?>$/i;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const markdown = new Marked(PLAN_MARKDOWN, {
  renderer: {
    html({ text, block }: Tokens.HTML | Tokens.Tag): string {
      if (!block && LINE_BREAK.test(text)) return "<br>";
      const shown = escapeHtml(text);
      // A block of raw HTML keeps its lines, as code does; inline HTML stays in its sentence.
      return block ? `<pre class="raw-html"><code>${shown.replace(/\n+$/, "")}</code></pre>\n` : shown;
    },
    checkbox({ checked }: Tokens.Checkbox): string {
      return `<span class="${TASK_BOX_CLASS}${checked ? ` ${TASK_DONE_CLASS}` : ""}"></span> `;
    },
  },
});

/**
 * The HTML marked makes of a plan's markdown (GFM), raw HTML shown as text. It may still throw on an
 * input no limit here foresaw (markdown.ts then shows the plan as plain text, with a notice).
 */
export function markdownHtml(content: string): string {
  return markdown.parse(content, { async: false });
}
