import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { Browser, Page } from "playwright-core";
import { AuthorKind, WriteMode } from "@taskplans/contract";
import { MAX_NESTING } from "../../../src/console/page/markdown-html";
import { artifactsDir, launchChromium } from "../../harness/browser/chromium";
import { collectPageErrors, texts, waitForText, windowFlag } from "../../harness/browser/page-waits";
import { type Clients, connect } from "../../harness/calls/rpc";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { repoRoot } from "../../harness/servers/repo-root";
import { randomId } from "../../harness/servers/test-app";

// The console renders what the plan says, no more, no less (docs/console.md, "Rendering rules"), in
// headless Chromium against a built server (dist/src/bin/main.js, which serves dist/console): a plan cannot
// take the name of the page's own elements (DOM clobbering), an unclosed raw-text element or comment
// cannot hide the lines after it, a deeply nested plan cannot break the page, and a right-to-left
// override in a name or title cannot reverse what is shown.
//
// CONSOLE_HOSTILE_MAIN names another build's main.js (with its dist/console beside it) to run the same
// checks against, as the failures before the fix were found. Each test gathers what a user sees into
// one object compared at once, so that a failing run lists every check that failed, not the first.

const MAIN = process.env.CONSOLE_HOSTILE_MAIN || undefined;
const agent = (name: string) => ({ kind: AuthorKind.AUTHOR_KIND_AGENT, name });
let browser: Browser;
let shots: string;
let replica: Replica;
let client: Clients;
let dir: string;
let base: string;
const pages: Page[] = [];

async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  pages.push(page);
  return { page, errors: collectPageErrors(page) };
}

async function newTask(): Promise<string> {
  const taskId = randomId("task");
  await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "a task" });
  return taskId;
}

/**
 * Polls `probe` until it returns `expected` (deep equality) or `ms` pass, and returns what it last
 * returned: the caller compares that, so a page that never gets there fails with what it showed.
 */
async function settled<T>(probe: () => Promise<T>, expected: T, ms = 5_000): Promise<T | string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const seen = await probe().catch((error: Error) => `(failed: ${error.message.split("\n")[0]})`);
    if (isDeepStrictEqual(seen, expected) || Date.now() > deadline) return seen;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether the text under `selector` contains `text` within `ms` (innerText: what is shown). */
function shows(page: Page, selector: string, text: string, ms = 5_000): Promise<boolean | string> {
  return settled(async () => (await page.innerText(selector, { timeout: 1_000 })).includes(text), true, ms);
}

// The page's own parts found by where they are in index.html, not by id (which a clobbering plan
// would share): the revision list, the Show diff button, the diff area and the status line.
const REAL_ROWS = "body > main > section:nth-of-type(2) > table > tbody > tr";
const REAL_SHOW_DIFF = "body > main > section:nth-of-type(2) > p > button:first-child";
const REAL_DIFF_SECTION = "body > main > section:nth-of-type(3)";
const REAL_DIFF = `${REAL_DIFF_SECTION} > pre`;
const REAL_STATUS = "body > header > p[role=status]";
const PLAN = "body > main > section:nth-of-type(1) > article";

/** The revision number and author of each row of the page's real revision list. */
function realRows(page: Page): Promise<string[][]> {
  return page.$$eval(REAL_ROWS, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].slice(2, 4).map((td) => td.textContent ?? "")),
  );
}

/** Each character of the text under `selector` with the left edge of its box, as Chromium laid it out. */
function charLefts(page: Page, selector: string): Promise<[string, number][]> {
  return page.$eval(selector, (root) => {
    const found: [string, number][] = [];
    const walker = root.ownerDocument.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? "";
      for (let i = 0; i < text.length; i += 1) {
        const range = root.ownerDocument.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getBoundingClientRect();
        if (box.width > 0 && text[i] !== " ") found.push([text[i] ?? "", box.left]);
      }
    }
    return found;
  });
}

/** Whether the characters under `selector` are laid out left to right in their order in the text (one line). */
async function readsLeftToRight(page: Page, selector: string): Promise<boolean> {
  const lefts = await charLefts(page, selector);
  return lefts.length > 0 && lefts.every(([, left], i) => i === 0 || left > (lefts[i - 1]?.[1] ?? 0));
}

/**
 * Whether the text node holding `text` under `selector` is isolated from the text around it: an element
 * between them (`selector`'s own element excluded: a cell, a heading or a paragraph is isolated as a
 * block, which keeps neither a name from the text beside it nor the name from its own override) is a
 * <bdi>, or has `dir`, or a computed unicode-bidi of isolate (or isolate-override, plaintext).
 */
function isolated(page: Page, selector: string, text: string): Promise<boolean> {
  return page.$eval(
    selector,
    (root, wanted) => {
      const walker = root.ownerDocument.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (!(node.textContent ?? "").includes(wanted)) continue;
        for (let at = node.parentElement; at && at !== root; at = at.parentElement) {
          const bidi = root.ownerDocument.defaultView?.getComputedStyle(at).unicodeBidi ?? "";
          if (at.tagName === "BDI" || at.hasAttribute("dir") || /isolate|plaintext/.test(bidi)) return true;
        }
      }
      return false;
    },
    text,
  );
}

/**
 * Starts keeping every text the page's status line shows (from now on), for `interruptions`: a
 * watch that broke and started again shows the writes all the same, so only its status tells.
 */
function recordStatuses(page: Page): Promise<unknown> {
  return page.evaluate(`(() => {
    const status = document.querySelector(${JSON.stringify(REAL_STATUS)});
    window.statusesShown = [status.textContent];
    new MutationObserver(() => window.statusesShown.push(status.textContent)).observe(status, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  })()`);
}

/** The status lines recorded since recordStatuses that said the watch was interrupted or ended. */
async function interruptions(page: Page): Promise<string[]> {
  const shown = (await windowFlag(page, "statusesShown")) as string[] | undefined;
  return (shown ?? ["(not recorded)"]).filter((line) => /interrupted|ended|not recorded/.test(line));
}

beforeAll(async () => {
  // The page is built by `npm run build`; building it here keeps this file runnable alone.
  if (!MAIN) execFileSync(process.execPath, [join(repoRoot(), "scripts", "build-console.mjs")]);
  dir = mkdtempSync(join(tmpdir(), "console-hostile-"));
  [browser, replica] = await Promise.all([
    launchChromium(),
    startReplica({ PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}` }, dir, null, {
      ...(MAIN ? { main: MAIN } : {}),
    }),
  ]);
  client = connect(replica.port);
  shots = artifactsDir("console");
  base = `http://127.0.0.1:${replica.httpPort}`;
});

afterAll(async () => {
  await browser?.close();
  client?.close();
  await replica?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  for (const page of pages.splice(0)) await page.close();
  // A server that a plan (or the page's calls) brought down fails the test that did it, with its log.
  const gone = replica.exitReason();
  if (gone)
    throw new Error(
      `the server ${gone}; its log ends:\n${readFileSync(replica.logFile, "utf8").slice(-4_000)}`,
    );
});

describe("a plan cannot clobber the console's own elements", () => {
  it("a plan with the ids and names of the page's elements and a fake 'approved' revision leaves the page its own: the real list shows the real revisions and Show diff writes into the real diff area", async () => {
    const taskId = await newTask();
    const clobbering = [
      "# Release plan",
      "",
      // The attack: an element named like the revision list (the page wrote the real rows
      // into it, inside the plan, and left its own list empty), and beside it a made-up list whose
      // one revision an approver wrote.
      `<div id="revisions"><table><tbody></tbody></table></div>`,
      "",
      `<table><thead><tr><th>#</th><th>Author</th><th>Markers</th></tr></thead><tbody><tr data-revision="9"><td>9</td><td>security-lead</td><td>approved</td></tr></tbody></table>`,
      "",
      `<section id="diff-section"><h2 id="diff-title">Diff #1 → #9</h2><pre id="diff">+ approved by security-lead</pre></section>`,
      "",
      `<form name="open-form"><input name="task"></form> <a name="from" id="revision-title">x</a> <img name="revisions" src="x"> <img name="getElementById" id="show-diff">`,
      "",
      "Ship it.",
      "",
    ].join("\n");
    await client.plans.createPlan({
      taskId,
      title: "Release",
      content: "# Release plan\n",
      author: agent("planner"),
    });
    await client.plans.savePlan({ taskId, content: clobbering, author: agent("builder") });

    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "version 2");
    const pageIds = ["revisions", "diff-section", "diff-title", "diff", "revision-title", "show-diff"];
    const seen: Record<string, unknown> = {
      watching: await shows(page, REAL_STATUS, "live: watching"),
      // The real list holds the two real revisions, by their real authors.
      realRows: await settled(
        () => realRows(page),
        [
          ["2", "builder"],
          ["1", "planner"],
        ],
      ),
      approvedCells: await page.$$eval(
        "td",
        (tds) => tds.filter((td) => td.textContent?.includes("approved")).length,
      ),
      // No element of the plan carries an id or a name, and each of the page's ids names one element.
      planIdsOrNames: await page.$$eval(`${PLAN} [id], ${PLAN} [name]`, (found) => found.length),
      pageIdCounts: await page.evaluate(
        `${JSON.stringify(pageIds)}.map((id) => document.querySelectorAll("[id='" + id + "']").length)`,
      ),
      // What the plan says is shown, as text.
      showsRawHtml: await shows(page, PLAN, `<div id="revisions">`),
      showsLastLine: await shows(page, PLAN, "Ship it."),
    };
    const planBefore = await page.innerHTML(PLAN);
    await page.click(REAL_SHOW_DIFF);
    seen.diffLines = await settled(
      async () =>
        (await texts(page, `${REAL_DIFF} span`)).filter((line) => /^(---|\+\+\+|\+Ship)/.test(line)),
      ["--- revision 1", "+++ revision 2", "+Ship it."],
    );
    seen.diffShown = await page.isVisible(REAL_DIFF_SECTION);
    seen.planUnchanged = (await page.innerHTML(PLAN)) === planBefore;
    seen.errors = errors;
    await page.screenshot({ path: join(shots, "hostile-clobbering.png"), fullPage: true });
    expect(seen).toEqual({
      watching: true,
      realRows: [
        ["2", "builder"],
        ["1", "planner"],
      ],
      approvedCells: 0,
      planIdsOrNames: 0,
      pageIdCounts: pageIds.map(() => 1),
      showsRawHtml: true,
      showsLastLine: true,
      diffLines: ["--- revision 1", "+++ revision 2", "+Ship it."],
      diffShown: true,
      planUnchanged: true,
      errors: [],
    });
  });

  it("the page keeps finding its own elements were an element with one of their ids to get past the sanitizer", async () => {
    const taskId = await newTask();
    await client.plans.createPlan({ taskId, content: "# One\n", author: agent("w1") });
    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, REAL_STATUS, "live: watching");
    await waitForText(page, REAL_ROWS, "w1");
    // The second wall, tested as the CSP's is in console.test.ts: elements named like the page's own,
    // put first in the document through DevTools, as a sanitizer bypass would.
    await page.evaluate(`(() => {
      const fake = document.createElement("div");
      for (const [tag, id] of [["table", "revisions"], ["pre", "diff"], ["section", "diff-section"], ["p", "status"], ["h2", "plan-title"]]) {
        const element = document.createElement(tag);
        element.id = id;
        if (tag === "table") element.append(document.createElement("tbody"));
        fake.append(element);
      }
      document.body.prepend(fake);
    })()`);
    await client.plans.updatePlan({
      taskId,
      content: "- two",
      mode: WriteMode.WRITE_MODE_APPEND,
      author: agent("w2"),
    });
    const seen: Record<string, unknown> = {
      status: await shows(page, REAL_STATUS, "live: version 2 by w2"),
      realRows: await settled(
        () => realRows(page),
        [
          ["2", "w2"],
          ["1", "w1"],
        ],
      ),
    };
    // (The first read listed one revision, chosen as both sides; the refresh kept that choice.)
    await page
      .check(`${REAL_ROWS} input[aria-label="to revision 2"]`, { timeout: 2_000 })
      .catch(() => undefined);
    await page.click(REAL_SHOW_DIFF);
    seen.diff = await shows(page, REAL_DIFF, "+- two");
    // The fakes stayed empty.
    seen.fakes = await page.$eval("body > div", (fake) => fake.textContent);
    seen.errors = errors;
    expect(seen).toEqual({
      status: true,
      realRows: [
        ["2", "w2"],
        ["1", "w1"],
      ],
      diff: true,
      fakes: "",
      errors: [],
    });
  });
});

// The HTML parser's raw-text and RCDATA elements, the template and the comment: each swallows what
// follows it when left unclosed, as markup. Then others that hide their content.
const UNCLOSED = [
  "<script>",
  "<style>",
  "<textarea>",
  "<title>",
  "<xmp>",
  "<iframe>",
  "<noembed>",
  "<noframes>",
  "<noscript>",
  "<plaintext>",
  "<template>",
  "<!--",
];
const HIDING = ["<details>", "<div hidden>", "<svg>", "<select>", "<![CDATA[", "<?php"];

describe("an unclosed element or comment in a plan hides nothing after it", () => {
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    ({ page, errors } = await newPage());
    pages.splice(pages.indexOf(page), 1);
    await page.goto(`${base}/console/`);
  });
  afterAll(async () => {
    await page.close();
  });

  const cases = [
    ...UNCLOSED.map((shape) => [shape, "on its own line"] as const),
    ...UNCLOSED.map((shape) => [shape, "inside a sentence"] as const),
    ...HIDING.map((shape) => [shape, "on its own line"] as const),
  ];
  it.each(cases)("%s %s", async (shape, where) => {
    const taskId = await newTask();
    const after = `the line after the shape in ${taskId}`;
    const opening = where === "on its own line" ? `before\n\n${shape}\n` : `before ${shape} in a sentence\n`;
    const content = `# Shape\n\n${opening}\n${after}\n\n- an item after\n\n## A heading after\n`;
    const title = `shape ${taskId}`;
    await client.plans.createPlan({ taskId, title, content, author: agent("planner") });
    await page.fill("#task-id", taskId);
    await page.click("#open");
    await waitForText(page, "#plan-title", title);
    await waitForText(page, "#plan-meta", "version 1");
    // What the plan says, every line of it, as Chromium shows it (innerText leaves out hidden text):
    // above all the lines after the shape, which an unclosed raw-text element or comment swallows.
    const shown = await page.innerText(PLAN);
    const seen = {
      hiddenAfter: [after, "an item after", "A heading after"].filter((line) => !shown.includes(line)),
      shapeShown: shown.includes(shape),
      beforeShown: shown.includes("before"),
      errors: errors.splice(0),
    };
    expect([shape, where, seen]).toEqual([
      shape,
      where,
      { hiddenAfter: [], shapeShown: true, beforeShown: true, errors: [] },
    ]);
  });
});

describe("a deeply nested plan renders, and the page goes on", () => {
  const deep = [
    ["2,000 '>'", `${">".repeat(2000)} deep text`],
    ["2,000 '> '", `${"> ".repeat(2000)}deep text`],
    ["2,000 '- '", `${"- ".repeat(2000)}deep text`],
    ["1,000 '> - '", `${"> - ".repeat(1000)}deep text`],
    ["2,000 emphases", `${"*a ".repeat(2000)}deep text${" a*".repeat(2000)}`],
  ] as const;
  it.each(deep)(
    "%s: the plan is shown, its revisions listed, and the watch follows writes",
    async (_name, line) => {
      const taskId = await newTask();
      await client.plans.createPlan({
        taskId,
        title: "Deep",
        content: `# Deep\n\nbefore\n\n${line}\n\nafter the nesting\n`,
        author: agent("nester"),
      });
      const { page, errors } = await newPage();
      await page.goto(`${base}/console/#task=${taskId}`);
      await recordStatuses(page);
      await waitForText(page, "#plan-meta", "version 1");
      const seen: Record<string, unknown> = {
        revisions: await settled(() => realRows(page), [["1", "nester"]]),
        // No error box: the page did not give up on the plan.
        errorShown: await page.isVisible("body > header > div[role=alert]"),
        watching: await shows(page, REAL_STATUS, "live: watching"),
        deepText: await shows(page, PLAN, "deep text"),
        after: await shows(page, PLAN, "after the nesting"),
        // Rendered as markdown (no fallback needed), nested no deeper than the limit.
        notices: (await page.$$(`${PLAN} .plain-text-notice`)).length,
        headings: await texts(page, `${PLAN} h1`),
        withinLimit:
          ((await page.evaluate(`(() => {
            const root = document.querySelector(${JSON.stringify(PLAN)});
            let deepest = 0;
            for (const element of root.querySelectorAll("blockquote, ul, em, strong")) {
              let depth = 0;
              for (let at = element; at && at !== root; at = at.parentElement)
                if (["BLOCKQUOTE", "UL", "EM", "STRONG"].includes(at.tagName)) depth += 1;
              deepest = Math.max(deepest, depth);
            }
            return deepest;
          })()`)) as number) <=
          2 * MAX_NESTING,
      };
      await client.plans.updatePlan({
        taskId,
        content: "appended live",
        mode: WriteMode.WRITE_MODE_APPEND,
        author: agent("follower"),
      });
      seen.appendShown = await shows(page, PLAN, "appended live");
      seen.appendListed = await settled(
        () => realRows(page),
        [
          ["2", "follower"],
          ["1", "nester"],
        ],
      );
      seen.interruptions = await interruptions(page);
      seen.errors = errors;
      expect(seen).toEqual({
        revisions: [["1", "nester"]],
        errorShown: false,
        watching: true,
        deepText: true,
        after: true,
        notices: 0,
        headings: ["Deep"],
        withinLimit: true,
        appendShown: true,
        appendListed: [
          ["2", "follower"],
          ["1", "nester"],
        ],
        interruptions: [],
        errors: [],
      });
    },
  );
});

describe("a right-to-left override in a name or title reverses nothing", () => {
  it("an author's and a title's bidi controls are isolated, and every line reads left to right", async () => {
    const taskId = await newTask();
    const rlo = "\u202E";
    await client.plans.createPlan({
      taskId,
      title: `Quarterly ${rlo}gnissecorp`,
      content: "# One\n",
      author: agent("planner"),
    });
    await client.plans.updatePlan({
      taskId,
      content: "- two",
      mode: WriteMode.WRITE_MODE_APPEND,
      author: agent(`Mallory${rlo}nimda`),
    });
    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, REAL_ROWS, "Mallory");
    const authorCell = `${REAL_ROWS}[data-revision="2"] td:nth-child(4)`;
    await recordStatuses(page);
    await page.click(`${REAL_ROWS}[data-revision="2"] button`);
    await waitForText(page, "#revision-title", "Revision #2");
    const seen: Record<string, unknown> = {
      // Shown as stored, the control as its code point (docs/console.md).
      author: await page.textContent(authorCell),
      title: await page.textContent("#plan-title"),
      revisionTitle: await page.textContent("#revision-title"),
      // Isolated: each name and title in its own <bdi> (unicode-bidi: isolate).
      isolated: [
        await isolated(page, authorCell, "Mallory"),
        await isolated(page, "#plan-title", "Quarterly"),
        await isolated(page, "#revision-title", "Quarterly"),
        await isolated(page, "#revision-title", "Mallory"),
      ],
      // Laid out as stored: every character to the right of the one before it, the text after a name
      // (") " of the revision title) included.
      leftToRight: [
        await readsLeftToRight(page, authorCell),
        await readsLeftToRight(page, "#plan-title"),
        await readsLeftToRight(page, "#revision-title"),
      ],
    };
    // The status line names the author of a live write the same way.
    await client.plans.updatePlan({
      taskId,
      content: "- three",
      mode: WriteMode.WRITE_MODE_APPEND,
      author: agent(`Eve${rlo}tnega`),
    });
    seen.status = await shows(page, REAL_STATUS, "live: version 3 by ");
    seen.interruptions = await interruptions(page);
    seen.statusIsolated = await isolated(page, REAL_STATUS, "Eve");
    seen.statusLeftToRight = await readsLeftToRight(page, REAL_STATUS);
    await page.screenshot({ path: join(shots, "hostile-bidi.png"), fullPage: true });
    seen.errors = errors;
    expect(seen).toEqual({
      author: "Mallory[U+202E]nimda",
      title: "Quarterly [U+202E]gnissecorp",
      revisionTitle: "Revision #2: Quarterly [U+202E]gnissecorp (by Mallory[U+202E]nimda)",
      isolated: [true, true, true, true],
      leftToRight: [true, true, true],
      status: true,
      statusIsolated: true,
      statusLeftToRight: true,
      interruptions: [],
      errors: [],
    });
  });
});

/**
 * Every <input> under `root`, as what a user and a reader of the markup see: its attributes' names
 * (sorted), its type, whether it is disabled and checked, and the text after it (a task item's text).
 */
function inputsUnder(page: Page, root: string): Promise<unknown[]> {
  return page.$$eval(`${root} input`, (inputs) =>
    inputs.map((input) => {
      const box = input as unknown as { type: string; disabled: boolean; checked: boolean } & typeof input;
      return {
        attributes: box.getAttributeNames().sort(),
        type: box.type,
        disabled: box.disabled,
        checked: box.checked,
        text: (box.nextSibling?.textContent ?? "").trim(),
      };
    }),
  );
}

/** A task-list item's box as the console must make it: a disabled checkbox, nothing else on it. */
const box = (checked: boolean, text: string) => ({
  attributes: checked ? ["checked", "disabled", "type"] : ["disabled", "type"],
  type: "checkbox",
  disabled: true,
  checked,
  text,
});

describe("a plan's checklist", () => {
  it("shows each task-list item as a disabled checkbox with its state, code as code, and the progress beside the version, live", async () => {
    const taskId = await newTask();
    const content = [
      "# Release",
      "",
      "- [x] write the migration",
      "- [ ] run it on staging",
      "  - [X] back up staging",
      "  - [ ] restore drill",
      "* [ ] announce",
      "",
      "1. [x] ordered done",
      "",
      "```",
      "- [x] in a fence",
      "```",
      "",
      "    - [ ] indented code",
      "",
      "We ship when [x] is done.",
      "",
    ].join("\n");
    await client.plans.createPlan({ taskId, title: "Checklist", content, author: agent("planner") });
    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "version 1");
    await waitForText(page, REAL_ROWS, "planner");
    const boxes = [
      box(true, "write the migration"),
      box(false, "run it on staging"),
      box(true, "back up staging"),
      box(false, "restore drill"),
      box(false, "announce"),
      box(true, "ordered done"),
    ];
    const seen: Record<string, unknown> = {
      meta: /^version 1 · 3 of 6 done · \d+ bytes · /.test((await page.textContent("#plan-meta")) ?? ""),
      boxes: await settled(() => inputsUnder(page, PLAN), boxes),
      code: await texts(page, `${PLAN} pre code`),
      midLine: await shows(page, PLAN, "We ship when [x] is done."),
    };
    // A click changes nothing: the boxes are read-only (the console writes nothing).
    for (const input of await page.$$(`${PLAN} input`))
      await input.click({ force: true, noWaitAfter: true }).catch(() => undefined);
    seen.afterClicks = await inputsUnder(page, PLAN);
    await page.screenshot({ path: join(shots, "checklist.png"), fullPage: true });
    // Another client ticks "announce": the box and the progress follow, without a reload.
    await client.plans.savePlan({
      taskId,
      content: content.replace("* [ ] announce", "* [x] announce"),
      author: agent("builder"),
    });
    seen.liveMeta = await shows(page, "#plan-meta", "version 2 · 4 of 6 done · ");
    seen.liveBoxes = await settled(
      async () => ((await inputsUnder(page, PLAN)) as { checked: boolean }[]).map((b) => b.checked),
      [true, false, true, false, true, true],
    );
    // A revision opened on its own shows its boxes the same way.
    await page.click(`${REAL_ROWS}[data-revision="1"] button`);
    await waitForText(page, "#revision-title", "Revision #1");
    seen.revisionBoxes = await settled(() => inputsUnder(page, "#revision-content"), boxes);
    seen.errors = errors;
    expect(seen).toEqual({
      meta: true,
      boxes,
      code: ["- [x] in a fence\n", "- [ ] indented code\n"],
      midLine: true,
      afterClicks: boxes,
      liveMeta: true,
      liveBoxes: [true, false, true, false, true, true],
      revisionBoxes: boxes,
      errors: [],
    });
  });

  it("a plan's raw inputs (text, handlers, autofocus, a forged placeholder) are text: the only inputs are the items' own disabled boxes, and nothing runs", async () => {
    const taskId = await newTask();
    const raws = [
      `<input type="text" value="typed" name="task">`,
      `<input type="checkbox" onclick="window.__pwned='click'" checked>`,
      `<input checked autofocus onfocus="window.__pwned='focus'">`,
      `<input type="image" src="x" onerror="window.__pwned='image'">`,
      `<span class="task-box task-done"></span>`,
    ];
    const content = [
      "# Hostile boxes",
      "",
      ...raws.flatMap((raw) => [raw, ""]),
      `Inline: <input autofocus onfocus="window.__pwned='inline-focus'"> and <input type=checkbox form=open-form>.`,
      "",
      `- [ ] <input type="checkbox" checked onclick="window.__pwned='item'" id="plan-meta"> raw input in an item`,
      `- [x] <span class="task-box task-done"></span> forged placeholder in an item`,
      `- [x] ticked <img src=x onerror="window.__pwned='img'">`,
      "",
    ].join("\n");
    await client.plans.createPlan({ taskId, title: "Hostile boxes", content, author: agent("mallory") });
    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "version 1");
    await waitForText(page, REAL_ROWS, "mallory");
    await page.click(`${REAL_ROWS}[data-revision="1"] button`);
    await waitForText(page, "#revision-title", "Revision #1");
    const boxes = [
      box(
        false,
        `<input type="checkbox" checked onclick="window.__pwned='item'" id="plan-meta"> raw input in an item`,
      ),
      box(true, `<span class="task-box task-done"></span> forged placeholder in an item`),
      box(true, `ticked <img src=x onerror="window.__pwned='img'">`),
    ];
    const seen: Record<string, unknown> = {
      boxes: await settled(() => inputsUnder(page, PLAN), boxes),
      revisionBoxes: await inputsUnder(page, "#revision-content"),
      meta: /^version 1 · 2 of 3 done · /.test((await page.textContent("#plan-meta")) ?? ""),
      // autofocus took no focus into the plan.
      focusInPlan: await page.evaluate(
        `Boolean(document.activeElement && document.activeElement.closest(${JSON.stringify(PLAN)}))`,
      ),
      rawShown:
        (await page.innerText(PLAN)).includes(raws[0] ?? "-") &&
        (await page.innerText(PLAN)).includes(raws[2] ?? "-"),
    };
    // Focus and click every input there is; none runs anything, in this same document.
    await page.evaluate("window.__sameDocument = true");
    for (const input of await page.$$(`${PLAN} input, #revision-content input`)) {
      await input.focus().catch(() => undefined);
      await input.click({ force: true, noWaitAfter: true }).catch(() => undefined);
    }
    seen.ran = [await windowFlag(page, "__pwned"), await windowFlag(page, "__sameDocument")];
    seen.afterClicks = await inputsUnder(page, PLAN);
    seen.pageMeta = await page.$$eval("[id='plan-meta']", (found) => found.length);
    seen.errors = errors;
    await page.screenshot({ path: join(shots, "hostile-checklist.png"), fullPage: true });
    expect(seen).toEqual({
      boxes,
      revisionBoxes: boxes,
      meta: true,
      focusInPlan: false,
      rawShown: true,
      ran: [undefined, true],
      afterClicks: boxes,
      pageMeta: 1,
      errors: [],
    });
  });
});

describe("the status line names a writer only when there is one", () => {
  it("a task without a plan is watched from a snapshot, which names nobody; the plan's creation then names its author and is listed", async () => {
    const taskId = await newTask();
    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "the task has no plan");
    await recordStatuses(page);
    const seen: Record<string, unknown> = {
      // The snapshot is a read: "live: version 0 at ...", not "live: version 0 by  at ...".
      snapshot: await settled(
        async () =>
          /^live: version 0 at \d\d:\d\d:\d\d UTC$/.test((await page.textContent(REAL_STATUS)) ?? ""),
        true,
      ),
    };
    await client.plans.createPlan({ taskId, title: "Late", content: "# Late plan\n", author: agent("Eve") });
    seen.created = await shows(page, REAL_STATUS, "live: version 1 by Eve at ");
    seen.plan = await shows(page, PLAN, "Late plan");
    seen.revisions = await settled(() => realRows(page), [["1", "Eve"]]);
    seen.errorShown = await page.isVisible("body > header > div[role=alert]");
    seen.interruptions = await interruptions(page);
    // (GetPlan's answer for a task without a plan is an HTTP 404, which Chromium logs.)
    seen.errors = errors.filter((error) => !error.includes("status of 404"));
    expect(seen).toEqual({
      snapshot: true,
      created: true,
      plan: true,
      revisions: [["1", "Eve"]],
      errorShown: false,
      interruptions: [],
      errors: [],
    });
  });
});
