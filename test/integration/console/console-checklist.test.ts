import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { AuthorKind } from "@taskplans/contract";
import { launchChromium } from "../../harness/browser/chromium";
import { collectPageErrors, texts, waitForText } from "../../harness/browser/page-waits";
import { repoRoot } from "../../harness/servers/repo-root";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The console shows the checklist progress the service counted (issue 56, item 3): in the plan's
// line, live, and in each revision's row; it counts in the browser only when an answer carries no
// figure (a plan written before the service counted it). Headless Chromium on a real server's HTTP
// listener while a gRPC client writes.

const PLAN = "# P\n\n- [x] a\n- [ ] b\n- [ ] c\n";
const agent = (name: string) => ({ kind: AuthorKind.AUTHOR_KIND_AGENT, name });
const GET_PLAN = "**/taskplans.v1.PlanService/GetPlan";
let browser: Browser;
const pages: Page[] = [];

beforeAll(async () => {
  execFileSync(process.execPath, [join(repoRoot(), "scripts", "build-console.mjs")]);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const page of pages.splice(0)) await page.close();
});

async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  pages.push(page);
  return { page, errors: collectPageErrors(page) };
}

/** The Checklist cell of each revision row, newest first (the column after Markers). */
const checklistCells = (page: Page) => texts(page, "#revisions tbody tr td:nth-child(9)");

describe("the console's checklist progress", () => {
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite", { env: { PLAN_HTTP_ADDRESS: "127.0.0.1:0" } });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("shows 1 of 3 done from the plan's metadata (uint64 as JSON strings), then 2 of 3 live after a tick, in the plan line and the revisions", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, title: "P", content: PLAN, author: agent("planner") });
    const { page, errors } = await newPage();
    const received: unknown[] = [];
    page.on("response", (response) => {
      if (response.url().endsWith("/GetPlan")) received.push(response.json());
    });
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "1 of 3 done");
    expect(await page.textContent("#plan-meta")).toMatch(/^version 1 · 1 of 3 done · \d+ bytes · /);
    // What the page receives: the HTTP door's proto JSON, uint64 as strings.
    const [answer] = (await Promise.all(received)) as { plan: { checklist?: unknown } }[];
    expect(answer?.plan.checklist).toEqual({ checked: "1", total: "3" });
    await waitForText(page, '#revisions tbody tr[data-revision="1"]', "1 of 3 done");

    await app.plans.editPlan({
      taskId,
      oldText: "- [ ] b",
      newText: "- [x] b",
      expectedVersion: 1,
      author: agent("builder"),
    });
    await waitForText(page, "#plan-meta", "version 2 · 2 of 3 done · ");
    await waitForText(page, '#revisions tbody tr[data-revision="2"]', "2 of 3 done");
    expect(await checklistCells(page)).toEqual(["2 of 3 done", "1 of 3 done"]);
    expect(await page.$$eval("#plan-content input[type=checkbox]", (boxes) => boxes.length)).toBe(3);
    expect(errors).toEqual([]);
  });

  it("shows no progress for a plan without boxes (stored as none: {} in JSON), and none in its revision row", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({
      taskId,
      title: "P",
      content: "# P\n\n- a\n- b\n",
      author: agent("planner"),
    });
    const { page, errors } = await newPage();
    const received: unknown[] = [];
    page.on("response", (response) => {
      if (response.url().endsWith("/GetPlan")) received.push(response.json());
    });
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, '#revisions tbody tr[data-revision="1"]', "none");
    expect(await page.textContent("#plan-meta")).toMatch(/^version 1 · \d+ bytes · /);
    expect(await page.textContent("#plan-meta")).not.toContain("done");
    const [answer] = (await Promise.all(received)) as { plan: { checklist?: unknown } }[];
    expect(answer?.plan.checklist).toEqual({});
    expect(await checklistCells(page)).toEqual(["none"]);
    expect(errors).toEqual([]);
  });

  it("shows the stored figure rather than its own count, and counts from the content only when the answer has none", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, title: "P", content: PLAN, author: agent("planner") });
    // A figure the content does not give (7 of 9) shows that the page displays the stored one.
    const stored = await newPage();
    await stored.page.route(GET_PLAN, async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { plan: Record<string, unknown> };
      body.plan.checklist = { checked: "7", total: "9" };
      await route.fulfill({ response, json: body });
    });
    await stored.page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(stored.page, "#plan-meta", "7 of 9 done");
    // An answer without the field (a plan not counted yet): counted in the browser, 1 of 3.
    const counted = await newPage();
    await counted.page.route(GET_PLAN, async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { plan: Record<string, unknown> };
      delete body.plan.checklist;
      await route.fulfill({ response, json: body });
    });
    await counted.page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(counted.page, "#plan-meta", "version 1 · 1 of 3 done · ");
    expect([stored.errors, counted.errors]).toEqual([[], []]);
  });
});
