import { MAX_NESTING, markdownHtml } from "../../src/console/page/markdown-html";

// The console's markdown rules (docs/console.md, "Rendering rules"), on the HTML marked makes before
// the sanitizer; test/integration/console-hostile.test.ts checks what Chromium then shows.

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
