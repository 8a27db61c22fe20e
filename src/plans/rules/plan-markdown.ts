import { type MarkedExtension, Tokenizer } from "marked";

// The markdown rules of a plan, shared by every reader of its structure: the console renders with
// them (src/console/page/markdown-html.ts) and the checklist progress counts with them
// (checklist-progress.ts), so a box the console shows is a box counted, and no other. Pure: marked's
// lexer, no DOM, no I/O.
//
// Containers nest at most MAX_NESTING deep (blockquotes and lists in blocks; emphasis, strike and links
// inline): marked tokenizes them recursively, and a line of 2,000 '>' overflowed its stack. Deeper
// markers are read as text.

/** How deep blockquotes, lists, emphasis and links may nest before the rest is read as text. */
export const MAX_NESTING = 16;

/**
 * The marked extension of a plan's markdown, made from marked's `Tokenizer` class: GitHub-flavoured
 * (task lists, tables, strike), synchronous, nesting bounded by `maxNesting`. Self-contained (it uses
 * nothing but its parameters), because it also runs from its source text in the thread that counts
 * large plans (src/threads/checklist-thread.ts), where marked is loaded anew.
 */
export function planMarkdownOf(tokenizer: typeof Tokenizer, maxNesting: number): MarkedExtension {
  // One counter per extension: marked is synchronous here, so it serves every instance using it.
  let depth = 0;
  // marked's own tokenizer for a construct it tokenizes recursively, counting the depth around it (the
  // wrapper runs with marked's tokenizer as `this`). At the limit the construct is not recognised, so
  // marked reads its markers as text.
  const nested = <A extends unknown[], T>(tokenize: (this: Tokenizer, ...args: A) => T) =>
    function (this: Tokenizer, ...args: A): T | undefined {
      if (depth >= maxNesting) return undefined;
      depth += 1;
      try {
        return tokenize.apply(this, args);
      } finally {
        depth -= 1;
      }
    };
  const original = tokenizer.prototype;
  return Object.freeze({
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
  });
}

/**
 * The marked extension of a plan's markdown (planMarkdownOf with marked's tokenizer and
 * MAX_NESTING). Give it to `new Marked(PLAN_MARKDOWN, ...)`; a renderer of its own may follow it.
 */
export const PLAN_MARKDOWN: MarkedExtension = planMarkdownOf(Tokenizer, MAX_NESTING);
