import { checklistProgress } from "../../../src/plans/rules/checklist-progress";
import { MAX_NESTING } from "../../../src/plans/rules/plan-markdown";

// A plan's checklist progress (src/plans/rules/checklist-progress.ts) by marked's GFM rules, those the
// console renders its boxes with: test/unit/console/console-markdown.test.ts checks that the console shows a
// box for each item counted here, and no other.

const CASES: readonly (readonly [string, string, number, number])[] = [
  ["no plan", "", 0, 0],
  ["a list without boxes", "# Plan\n\n- a\n- b\n", 0, 0],
  ["ticked with x and X, and unticked", "- [x] a\n- [X] b\n- [ ] c\n", 2, 3],
  ["all unticked", "# Plan\n\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d\n", 0, 4],
  ["nested lists count", "- [ ] a\n  - [x] a.1\n    - [x] a.1.1\n- [x] b\n", 3, 4],
  ["a box under a plain item counts", "- phase one\n  - [x] step\n  - [ ] step\n", 1, 2],
  ["* and + bullets", "* [ ] a\n* [x] b\n\n+ [x] c\n", 2, 3],
  ["ordered lists, 1. and 1)", "1. [ ] a\n2. [x] b\n\n1) [x] c\n", 2, 3],
  ["a loose list (blank lines between items)", "- [x] a\n\n- [ ] b\n\n- [x] c\n", 2, 3],
  ["in a blockquote", "> - [x] quoted\n> - [ ] quoted\n", 1, 2],
  ["a tab after the box", "- [x]\ttabbed\n", 1, 1],
  ["in a fenced code block: excluded", "- [x] real\n\n```\n- [x] code\n- [ ] code\n```\n", 1, 1],
  ["in a ~~~ fence: excluded", "~~~md\n- [x] code\n~~~\n- [ ] real\n", 0, 1],
  ["in an unclosed fence: excluded to the end", "- [ ] real\n\n```\n- [x] code\n", 0, 1],
  ["in indented code: excluded", "Text\n\n    - [x] code\n    - [ ] code\n", 0, 0],
  ["[x] in the middle of a line is not a box", "We ship when [x] is done.\n- the item [x] later\n", 0, 0],
  ["[x] at the start of a line that is no list item", "[x] not a list\n", 0, 0],
  ["a box with no text after it is not one", "- [x]\n- [ ]\n", 0, 0],
  ["other letters are not boxes", "- [y] a\n- [] b\n- [xx] c\n", 0, 0],
  ["no space after the bullet: no list", "-[x] a\n", 0, 0],
  ["a box in a code span is not one", "- `[x]` a\n", 0, 0],
  ["raw HTML around items: the block is HTML", "<div>\n- [x] in html\n</div>\n\n- [x] after\n", 1, 1],
  ["CRLF lines", "# Plan\r\n\r\n- [x] a\r\n- [ ] b\r\n  - [X] c\r\n", 2, 3],
  ["CRLF code fence", "```\r\n- [x] code\r\n```\r\n- [ ] real\r\n", 0, 1],
  // Found by the append differential (checklist-append.test.ts): counted as no checklist before.
  ["an item with a lazy continuation line", "- [ ] a\n-->\n- [x] b\ncontinued\n", 1, 2],
  ["a paragraph continued after a box", "- [x] a\n\n  more of a\nand lazily\n", 1, 1],
];

describe("checklistProgress", () => {
  it.each(CASES)("%s", (_name, markdown, checked, total) => {
    expect(checklistProgress(markdown)).toEqual({ checked, total });
  });

  it("counts items nested to the limit and none past it (their markers are text, as the console shows them)", () => {
    const within = Array.from({ length: MAX_NESTING }, (_, i) => `${"  ".repeat(i)}- [x] level ${i + 1}\n`);
    expect(checklistProgress(within.join(""))).toEqual({ checked: MAX_NESTING, total: MAX_NESTING });
    expect(checklistProgress(`${"- ".repeat(MAX_NESTING + 10)}[x] deep\n`)).toEqual({ checked: 0, total: 0 });
  });

  it.each([
    ["2,000 '>'", `${">".repeat(2000)} - [x] deep\n- [x] after\n`],
    ["2,000 '- '", `${"- ".repeat(2000)}[x] deep\n\n- [x] after\n`],
    ["2,000 '> - '", `${"> - ".repeat(2000)}[x] deep\n\n- [x] after\n`],
  ])("%s: counts without overflowing the stack", (_name, markdown) => {
    expect(checklistProgress(markdown)).toEqual({ checked: 1, total: 1 });
  });

  it("counts a plan of 10,000 items", () => {
    const plan = Array.from({ length: 10_000 }, (_, i) => `- [${i % 3 === 0 ? "x" : " "}] step ${i}\n`).join(
      "",
    );
    expect(checklistProgress(plan)).toEqual({ checked: 3334, total: 10_000 });
  });
});
