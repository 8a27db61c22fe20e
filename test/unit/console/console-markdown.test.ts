import { MAX_NESTING, markdownHtml } from "../../../src/console/page/markdown-html";
import { checklistProgress } from "../../../src/plans/rules/checklist-progress";

// The console's markdown rules (docs/console.md, "Rendering rules"), on the HTML marked makes before
// the sanitizer; test/integration/console/console-hostile.test.ts checks what Chromium then shows.

/** How deep `tag` nests in `html` (an opening adds one, a closing takes one away). */
function depthOf(html: string, tag: string): number {
  let depth = 0;
  let deepest = 0;
  for (const [, closing] of html.matchAll(new RegExp(`<(/?)${tag}[ >]`, "g"))) {
    depth += closing ? -1 : 1;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

describe("a plan's raw HTML", () => {
  it("is shown as the text it is, in a sentence and as a block", () => {
    expect(markdownHtml("a <b>bold</b> word")).toBe("<p>a &#60;b&#62;bold&#60;/b&#62; word</p>\n");
    expect(markdownHtml(`<div id="revisions" onclick="x()">\n<table>\n</div>\n`)).toBe(
      `<pre class="raw-html"><code>&#60;div id=&#34;revisions&#34; onclick=&#34;x()&#34;&#62;\n&#60;table&#62;\n&#60;/div&#62;</code></pre>\n`,
    );
  });

  it.each([
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "plaintext",
    "template",
  ])("an unclosed <%s> keeps every line after it, as text", (tag) => {
    const html = markdownHtml(`before\n\n<${tag}>\n\nafter one\n\n# after two\n`);
    expect(html).not.toMatch(new RegExp(`<${tag}`, "i"));
    expect(html).toContain(`&#60;${tag}&#62;`);
    expect(html).toContain("after one");
    expect(html).toContain("after two");
  });

  it("an unclosed comment keeps every line after it, as text", () => {
    const html = markdownHtml("before\n\n<!-- hidden?\n\nafter one\n");
    expect(html).not.toContain("<!--");
    expect(html).toContain("&#60;!-- hidden?\n\nafter one");
  });

  it("keeps only a line break: <br> in every spelling", () => {
    expect(markdownHtml("| a |\n| - |\n| one<br>two<br/>three<BR /> |\n")).toContain(
      "<td>one<br>two<br>three<br></td>",
    );
    expect(markdownHtml("one <br onclick=x> two")).toBe("<p>one &#60;br onclick=x&#62; two</p>\n");
  });

  it("is not the markdown around it: code, links and entities render as markdown does", () => {
    expect(markdownHtml("`<b>` and [a](https://x.example/) &amp;")).toBe(
      '<p><code>&lt;b&gt;</code> and <a href="https://x.example/">a</a> &amp;</p>\n',
    );
  });
});

describe("nesting", () => {
  it.each([
    ["2,000 '>'", `${">".repeat(2000)} deep`, "blockquote"],
    ["200,000 '>'", ">".repeat(200_000), "blockquote"],
    ["2,000 '> '", `${"> ".repeat(2000)}deep`, "blockquote"],
    ["2,000 '- '", `${"- ".repeat(2000)}deep`, "ul"],
    ["2,000 '1. '", `${"1. ".repeat(2000)}deep`, "ol"],
    ["2,000 emphases", `${"*a ".repeat(2000)}deep${" a*".repeat(2000)}`, "em"],
    ["2,000 strikes", `${"~~a ".repeat(2000)}deep${" a~~".repeat(2000)}`, "del"],
  ])("%s: renders without overflowing the stack, nested at most MAX_NESTING deep", (_name, content, tag) => {
    const html = markdownHtml(`# Deep\n\n${content}\n\nafter\n`);
    expect(depthOf(html, tag)).toBeGreaterThan(1);
    expect(depthOf(html, tag)).toBeLessThanOrEqual(MAX_NESTING);
    expect(html).toContain("<p>after</p>");
  });

  it("blockquotes and lists share the limit; the markers past it are text", () => {
    const html = markdownHtml(`${"> - ".repeat(100)}deep\n`);
    expect(depthOf(html, "blockquote") + depthOf(html, "ul")).toBe(MAX_NESTING);
    expect(html).toContain("&gt; - &gt; - ");
  });

  it("leaves ordinary nesting alone", () => {
    expect(markdownHtml("> quote\n>> nested\n\n- a\n  - b\n")).toBe(
      "<blockquote>\n<p>quote</p>\n<blockquote>\n<p>nested</p>\n</blockquote>\n</blockquote>\n<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n",
    );
  });
});

describe("task-list items", () => {
  const BOX = '<span class="task-box"></span> ';
  const DONE = '<span class="task-box task-done"></span> ';

  it("render a placeholder for each box, ticked or not, which markdown.ts makes a disabled checkbox", () => {
    expect(markdownHtml("- [x] done\n- [X] done too\n- [ ] open\n")).toBe(
      `<ul>\n<li>${DONE}done</li>\n<li>${DONE}done too</li>\n<li>${BOX}open</li>\n</ul>\n`,
    );
    expect(markdownHtml("1. [ ] a\n   - [x] b\n")).toBe(
      `<ol>\n<li>${BOX}a<ul>\n<li>${DONE}b</li>\n</ul>\n</li>\n</ol>\n`,
    );
  });

  it("make no <input> of marked's own, and a box in code stays code", () => {
    const html = markdownHtml("- [x] a\n\n```\n- [x] code\n```\n\n    - [ ] indented\n\n`- [x]` span\n");
    expect(html).not.toMatch(/<input/i);
    expect(html).toContain("<pre><code>- [x] code\n</code></pre>");
    expect(html).toContain("<code>- [x]</code> span");
    expect(html.split('class="task-box').length - 1).toBe(1);
  });

  it.each([
    `<input type="text" value="x" name="task">`,
    `<input type="checkbox" onclick="window.__pwned = 1" checked>`,
    `<input checked autofocus onfocus="window.__pwned = 1">`,
    `- [ ] <input type="checkbox" checked onclick="x()"> an item with a raw input`,
    `<span class="task-box task-done"></span> a forged placeholder`,
  ])("raw HTML of an input or a placeholder is text: %s", (raw) => {
    const html = markdownHtml(`${raw}\n\n<p>${raw}</p>\n`);
    expect(html).not.toMatch(/<input/i);
    expect(html).toContain("&#60;");
    // The one placeholder is that of the item's own "- [ ]"; the forged one is text.
    expect(html.split("<span").length - 1).toBe(raw.startsWith("- [ ]") ? 1 : 0);
  });

  it.each([
    ["a checklist", "- [x] a\n- [ ] b\n  - [X] c\n"],
    ["loose, ordered and quoted", "1. [x] a\n\n2. [ ] b\n\n> * [x] q\n"],
    ["code and HTML around", "```\n- [x] c\n```\n<div>\n- [x] h\n</div>\n\n- [ ] real\n    - [x] nested\n"],
    ["not boxes", "- [y] a\n- [x]\n- `[x]` a\ntext [x]\n[x] no list\n"],
    ["CRLF", "- [x] a\r\n- [ ] b\r\n"],
    ["past the nesting limit", `${"- ".repeat(MAX_NESTING + 4)}[x] deep\n${"> ".repeat(40)}- [x] deep\n`],
    [
      "to the nesting limit",
      Array.from({ length: MAX_NESTING }, (_, i) => `${"  ".repeat(i)}- [x] ${i}\n`).join(""),
    ],
  ])("%s: the console shows a box for each item checklistProgress counts, and no other", (_name, plan) => {
    const html = markdownHtml(plan);
    const boxes = html.split('class="task-box').length - 1;
    const ticked = html.split('class="task-box task-done"').length - 1;
    expect({ checked: ticked, total: boxes }).toEqual(checklistProgress(plan));
  });
});
