import { Marked, Tokenizer, type Tokens } from "marked";

// A plan's markdown as HTML, before sanitizing (markdown.ts): pure, no DOM, unit-tested in Node
// (test/unit/console-markdown.test.ts). Two rules make the console show what the plan says, no more
// and no less (docs/console.md, "Rendering rules"):
// - Raw HTML in a plan is shown as the text it is, never parsed: an unclosed <style>, <xmp>,
//   <plaintext>, <template> or <!-- cannot swallow the lines after it, and a plan cannot name
//   (id, name) or hide anything. The one exception is a line break, <br>, which cannot hold text.
// - Containers nest at most MAX_NESTING deep (blockquotes and lists in blocks; emphasis, strike and
//   links inline): marked tokenizes them recursively, and a line of 2,000 '>' overflowed its stack.
//   Deeper markers are shown as text.

/** How deep blockquotes, lists, emphasis and links may nest before the rest is shown as text. */
export const MAX_NESTING = 16;

const LINE_BREAK = /^<br\s*\/?>$/i;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

let depth = 0;

/**
 * marked's own tokenizer for a construct it tokenizes recursively, counting the depth around it (the
 * wrapper runs with marked's tokenizer as `this`). At the limit the construct is not recognised, so
 * marked reads its markers as text.
 */
function nested<A extends unknown[], T>(
  tokenize: (this: Tokenizer, ...args: A) => T,
): (this: Tokenizer, ...args: A) => T | undefined {
  return function (this: Tokenizer, ...args: A): T | undefined {
    if (depth >= MAX_NESTING) return undefined;
    depth += 1;
    try {
      return tokenize.apply(this, args);
    } finally {
      depth -= 1;
    }
  };
}

const original = Tokenizer.prototype;

const markdown = new Marked({
  async: false,
  gfm: true,
  tokenizer: {
    blockquote: nested(original.blockquote),
    list: nested(original.list),
    emStrong: nested(original.emStrong),
    del: nested(original.del),
    link: nested(original.link),
    reflink: nested(original.reflink),
  },
  renderer: {
    html({ text, block }: Tokens.HTML | Tokens.Tag): string {
      if (!block && LINE_BREAK.test(text)) return "<br>";
      const shown = escapeHtml(text);
      // A block of raw HTML keeps its lines, as code does; inline HTML stays in its sentence.
      return block ? `<pre class="raw-html"><code>${shown.replace(/\n+$/, "")}</code></pre>\n` : shown;
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
