import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { SignJWT } from "jose";
import type { Browser, Page } from "playwright-core";
import { AuthorKind, WriteMode } from "@taskplans/contract";
import { CONTENT_SECURITY_POLICY } from "../../../src/console/csp";
import { cspReports } from "../../../src/console/csp-reports";
import { artifactsDir, launchChromium } from "../../harness/browser/chromium";
import { collectPageErrors, texts, waitForText, windowFlag } from "../../harness/browser/page-waits";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { planState } from "../../harness/model/plan-state";
import { startFailoverProxy } from "../../harness/network/failover-proxy";
import { waitFor } from "../../harness/servers/processes";
import { repoRoot } from "../../harness/servers/repo-root";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The plan console (docs/console.md) as a person uses it: headless Chromium (Debian's, driven by
// playwright-core) on the HTTP listener of a real server, while another client writes over gRPC.
// One browser for the file; screenshots go to var/artifacts/console (printed below).

const run = promisify(execFile);
const agent = (name: string) => ({ kind: AuthorKind.AUTHOR_KIND_AGENT, name });
let browser: Browser;
let shots: string;
const pages: Page[] = [];

async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  pages.push(page);
  return { page, errors: collectPageErrors(page) };
}

/** The real curl: status line and headers (lower-cased) of a request, sent as written. */
async function curl(
  url: string,
  ...args: string[]
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { stdout } = await run("curl", ["-sS", "-i", "--path-as-is", ...args, url]);
  const [head = "", ...rest] = stdout.split("\r\n\r\n");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(":")).toLowerCase(),
      line.slice(line.indexOf(":") + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n") };
}

beforeAll(async () => {
  // The page is built by `npm run build`; building it here keeps this file runnable alone.
  execFileSync(process.execPath, [join(repoRoot(), "scripts", "build-console.mjs")]);
  browser = await launchChromium();
  shots = artifactsDir("console");
  console.log(`console screenshots: ${shots}`);
});

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  for (const page of pages.splice(0)) await page.close();
});

describe("the plan console (no auth)", () => {
  const log = capturingLogger();
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite", {
      env: { PLAN_HTTP_ADDRESS: "127.0.0.1:0" },
      overrides: { logger: log.logger },
    });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("is served as its four files with a strict CSP, nosniff and their content types; nothing else under /console is", async () => {
    for (const [path, type] of [
      ["/console", "text/html; charset=utf-8"],
      ["/console/", "text/html; charset=utf-8"],
      ["/console/console.js", "text/javascript; charset=utf-8"],
      ["/console/console.css", "text/css; charset=utf-8"],
      ["/console/favicon.svg", "image/svg+xml"],
    ] as const) {
      const answer = await curl(`${base}${path}`);
      expect([path, answer.status, answer.headers["content-type"]]).toEqual([path, 200, type]);
      expect(answer.headers["x-content-type-options"]).toBe("nosniff");
      expect(answer.headers["content-security-policy"]).toMatch(
        /^default-src 'self'; script-src 'self'; .*object-src 'none'; base-uri 'none'; .*frame-ancestors 'none'; .*report-uri \/console\/csp-report$/,
      );
    }
    // Traversal, encoded or not, and any other name: 404 with the same headers, no file read.
    for (const path of [
      "/console/../package.json",
      "/console/%2e%2e/%2e%2e/package.json",
      "/console/..%2f..%2fpackage.json",
      "/console/..\\..\\package.json",
      "/console/index.html/",
      "/console/serve.ts",
    ]) {
      const answer = await curl(`${base}${path}`);
      expect([path, answer.status, answer.body]).toEqual([path, 404, "not found\n"]);
      expect(answer.headers["content-security-policy"]).toContain("default-src 'self'");
    }
    expect((await curl(`${base}/console/`, "-X", "POST")).status).toBe(405);
    expect((await curl(`${base}/console/csp-report`)).status).toBe(405);
  });

  it("answers docs/console.md's curl command as written (on this server's port), with the policy the doc shows", async () => {
    const doc = readFileSync(join(repoRoot(), "docs", "console.md"), "utf8");
    const commands = doc.split("\n").filter((line) => line.startsWith("curl "));
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) {
      const [, ...args] = (command.split("#")[0] ?? "").trim().split(/\s+/);
      const { stdout } = await run(
        "curl",
        args.map((arg) => arg.replace("127.0.0.1:8080", `127.0.0.1:${app.httpPort}`)),
      );
      expect(stdout).toMatch(/^HTTP\/1\.1 200 /);
      expect(stdout.toLowerCase()).toContain(
        `content-security-policy: ${CONTENT_SECURITY_POLICY.toLowerCase()}`,
      );
    }
    const shown = doc.slice(
      doc.indexOf("  ```\n  default-src") + 6,
      doc.indexOf("report-uri /console/csp-report\n") + 30,
    );
    expect(shown.replace(/\s+/g, " ").trim()).toBe(CONTENT_SECURITY_POLICY);
  });

  it("counts a CSP report posted to it, and refuses one over 16 KiB", async () => {
    const before = cspReports().total;
    const report = JSON.stringify({
      "csp-report": { "effective-directive": "img-src", "blocked-uri": "https://x.example/" },
    });
    const posted = await curl(
      `${base}/console/csp-report`,
      "-H",
      "content-type: application/csp-report",
      "--data-binary",
      report,
    );
    expect(posted.status).toBe(204);
    const huge = await curl(
      `${base}/console/csp-report`,
      "-H",
      "content-type: application/csp-report",
      "--data-binary",
      "x".repeat(17_000),
    );
    expect(huge.status).toBe(413);
    // Without a length, counted as it arrives.
    const chunked = await curl(
      `${base}/console/csp-report`,
      "-H",
      "transfer-encoding: chunked",
      "--data-binary",
      "x".repeat(40_000),
    );
    expect(chunked.status).toBe(413);
    expect(cspReports().total).toBe(before + 1);
    expect(cspReports().recent.at(-1)).toMatchObject({ directive: "img-src", blocked: "https://x.example/" });
  });

  it("shows a plan rendered with its version, size and revisions, diffs two revisions, and follows writes by a gRPC client without a reload", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({
      taskId,
      title: "Ship the console",
      content: "# Steps\n\n1. old step\n2. keep\n",
      author: agent("planner"),
    });
    await app.plans.savePlan({
      taskId,
      content: "# Steps\n\n1. new step\n2. keep\n",
      author: { kind: AuthorKind.AUTHOR_KIND_USER, name: "Ann" },
    });
    const history = await app.plans.listPlanRevisions({ taskId });
    const first = history.revisions.find((r) => r.revisionNumber === 1);
    await app.plans.revertPlan({ taskId, revisionId: first?.id ?? "" });

    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "version 3");
    // The revisions are listed after the plan is shown.
    await waitForText(page, '#revisions tbody tr[data-revision="3"]', "revert of #1");
    expect(await page.textContent("#plan-title")).toBe("Ship the console");
    expect(await page.textContent("#plan-meta")).toMatch(
      /^version 3 · 29 bytes · 29 characters · updated .*Z · revision #3$/,
    );
    expect(await texts(page, "#plan-content h1")).toEqual(["Steps"]);
    expect(await texts(page, "#plan-content li", true)).toEqual(["old step", "keep"]);
    const rows = await page.$$eval("#revisions tbody tr", (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].slice(2, 8).map((td) => td.textContent)),
    );
    expect(
      rows.map(([number, author, kind, , size, markers]) => [number, author, kind, size, markers]),
    ).toEqual([
      ["3", "User", "user", "29 bytes", "revert of #1"],
      ["2", "Ann", "user", "29 bytes", ""],
      ["1", "planner", "agent", "29 bytes", ""],
    ]);

    // The diff of the two revisions chosen: #1 -> #2.
    await page.check('input[aria-label="from revision 1"]');
    await page.check('input[aria-label="to revision 2"]');
    await page.click("#show-diff");
    await waitForText(page, "#diff-title", "Diff #1 → #2");
    expect(await texts(page, "#diff span")).toEqual([
      "--- revision 1",
      "+++ revision 2",
      "@@ -1,4 +1,4 @@",
      " # Steps",
      " ",
      "-1. old step",
      "+1. new step",
      " 2. keep",
    ]);
    expect(
      await page.$$eval("#diff span.diff-added, #diff span.diff-removed", (s) => s.map((x) => x.className)),
    ).toEqual(["diff-removed", "diff-added"]);
    expect(await page.textContent("#diff-summary")).toBe("+1 −1 lines, 29 bytes → 29 bytes");
    await page.screenshot({ path: join(shots, "plan-and-diff.png"), fullPage: true });

    // One revision's content, read with GetPlanRevision.
    await page.click('#revisions tbody tr[data-revision="2"] button');
    await waitForText(page, "#revision-title", "Revision #2");
    expect(await page.textContent("#revision-title")).toBe("Revision #2: Ship the console (by Ann)");
    expect(await texts(page, "#revision-content li", true)).toEqual(["new step", "keep"]);

    // Another client appends over gRPC; the page follows through WatchPlan, without a reload.
    await page.evaluate("window.__sameDocument = true");
    await app.plans.updatePlan({
      taskId,
      content: "3. appended live",
      mode: WriteMode.WRITE_MODE_APPEND,
      author: agent("builder"),
    });
    await waitForText(page, "#plan-content", "appended live");
    await waitForText(page, "#revisions tbody", "builder");
    await app.plans.updatePlan({
      taskId,
      content: "4. and coalesced",
      mode: WriteMode.WRITE_MODE_APPEND,
      author: agent("builder"),
    });
    await waitForText(page, "#plan-content", "and coalesced");
    await waitForText(page, '#revisions tbody tr[data-revision="4"]', "coalesced");
    expect(await windowFlag(page, "__sameDocument")).toBe(true);
    // The revisions chosen for the diff stay chosen through the refreshes.
    expect(await page.isChecked('input[aria-label="from revision 1"]')).toBe(true);
    expect(await page.isChecked('input[aria-label="to revision 2"]')).toBe(true);
    expect(await texts(page, "#plan-content li", true)).toEqual([
      "old step",
      "keep",
      "appended live",
      "and coalesced",
    ]);
    expect(await page.textContent("#plan-meta")).toMatch(/^version 5 /);
    expect(await page.textContent("#status")).toMatch(/^live: version 5 by builder/);
    await page.screenshot({ path: join(shots, "live-append.png"), fullPage: true });
    expect(errors).toEqual([]);
  });

  it("pages through more than 100 revisions with Load older, and shows a plan deleted by another client live", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Long\n", author: agent("w0") });
    // Two authors taking turns: no write coalesces, so 101 revisions.
    for (let i = 1; i <= 100; i += 1)
      await app.plans.updatePlan({
        taskId,
        content: `- step ${i}`,
        mode: WriteMode.WRITE_MODE_APPEND,
        author: agent(`w${i % 2}`),
      });
    const { page, errors } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "revision #101");
    await waitForText(page, '#revisions tbody tr[data-revision="101"]', "w0");
    expect((await page.$$("#revisions tbody tr")).length).toBe(100);
    expect(await page.isVisible("#load-older")).toBe(true);
    await page.click("#load-older");
    await waitForText(page, '#revisions tbody tr[data-revision="1"]', "w0");
    expect((await page.$$("#revisions tbody tr")).length).toBe(101);
    expect(await page.isHidden("#load-older")).toBe(true);

    await app.plans.deletePlan({ taskId });
    await waitForText(page, "#plan-title", "No plan");
    expect(await page.textContent("#plan-meta")).toBe("the task has no plan (yet, or it was deleted)");
    expect(await page.textContent("#status")).toMatch(/^live: version 102/);
    expect(errors).toEqual([]);
  });

  it("resumes a watch its connection lost from the last version it showed, and shows the writes made meanwhile", async () => {
    // The page reaches the listener through a TCP proxy, as through a load balancer that drops
    // connections: the test cuts every connection and holds new ones while another client writes.
    const proxy = await startFailoverProxy(() => app.httpPort);
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "# Resume\n\n- one\n", author: agent("w1") });
      const { page, errors } = await newPage();
      const watches: unknown[] = [];
      page.on("request", (request) => {
        if (!request.url().endsWith("/taskplans.v1.PlanService/WatchPlan")) return;
        // A Connect streaming request body: one envelope (flags, length, then the JSON message).
        watches.push(JSON.parse((request.postDataBuffer() ?? Buffer.alloc(5)).subarray(5).toString()));
      });
      await page.goto(`http://127.0.0.1:${proxy.port}/console/#task=${taskId}`);
      await waitForText(page, "#status", "live: watching");
      await page.evaluate("window.__sameDocument = true");
      const append = (line: string, author: string) =>
        app.plans.updatePlan({
          taskId,
          content: line,
          mode: WriteMode.WRITE_MODE_APPEND,
          author: agent(author),
        });
      await append("- two", "w0");
      await waitForText(page, "#status", "live: version 2");
      // The revisions are read again after each change: that read is done before the cut.
      await waitForText(page, '#revisions tbody tr[data-revision="2"]', "w0");

      proxy.pause();
      proxy.cut();
      await waitForText(page, "#status", "watch interrupted");
      await append("- three", "w1");
      await append("- four", "w0");
      // The page's retry (3 s after the cut) waits at the proxy until it lets connections through.
      await waitFor("the page's second WatchPlan", async () => watches.length >= 2, 15_000);
      proxy.resume();

      await waitForText(page, "#status", "live: version 4");
      expect(await texts(page, "#plan-content li", true)).toEqual(["one", "two", "three", "four"]);
      await waitForText(page, '#revisions tbody tr[data-revision="4"]', "w0");
      // The first watch follows from the version GetPlan read; the second from the last one shown.
      expect(watches).toEqual([
        { taskId, afterVersion: "1", includeContent: true },
        { taskId, afterVersion: "2", includeContent: true },
      ]);
      expect(await windowFlag(page, "__sameDocument")).toBe(true);
      // Chromium's own line for the stream the cut ended; nothing else went wrong on the page.
      expect(errors).toEqual(["console: Failed to load resource: net::ERR_INCOMPLETE_CHUNKED_ENCODING"]);
    } finally {
      await proxy.close();
    }
  });

  it("runs nothing a hostile plan, title or author holds, shows them as text, and the CSP blocks and reports what would get past the sanitizer", async () => {
    const taskId = await app.newTask();
    const hostileName = `<img src=x onerror="window.__pwned='author'">`;
    const payloads = [
      `<script>window.__pwned = "script"</script>`,
      `<img src="x" onerror="window.__pwned = 'img'">`,
      `[a javascript link](javascript:window.__pwned='link')`,
      `<a id="raw-link" href="javascript:window.__pwned='raw-link'">raw link</a>`,
      `<svg onload="window.__pwned = 'svg'"><circle r="1"></circle></svg>`,
      `<iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>`,
      `<div onclick="window.__pwned='click'" style="color:red">raw <b>HTML</b> div</div>`,
      `<form action="javascript:window.__pwned='form'"><button id="go">go</button></form>`,
      `![a tracking pixel](https://tracker.example/pixel.png)`,
      `<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned='mxss'"></style></mglyph></table></mtext></math>`,
    ];
    await app.plans.createPlan({
      taskId,
      title: `<script>window.__pwned='title'</script>`,
      content: "# Hostile\n",
      author: agent("planner"),
    });
    const hostile = `# Hostile\n\n${payloads.join("\n\n")}\n`;
    await app.plans.updatePlan({ taskId, content: hostile, expectedVersion: 1, author: agent(hostileName) });
    const before = cspReports().total;

    const { page } = await newPage();
    await page.goto(`${base}/console/#task=${taskId}`);
    await waitForText(page, "#plan-meta", "version 2");
    await waitForText(page, '#revisions tbody tr[data-revision="2"]', "agent");
    await page.click("#show-diff");
    await waitForText(page, "#diff-title", "Diff #1 → #2");
    // The hostile revision opened on its own is rendered through the same sanitizer.
    await page.click('#revisions tbody tr[data-revision="2"] button');
    await waitForText(page, "#revision-content", "raw <b>HTML</b> div");
    // Nothing ran on its own (script, img onerror, svg onload, iframe); then click everything a
    // payload could hang on, in this same document (a javascript: URL that ran would replace it).
    expect(await windowFlag(page, "__pwned")).toBeUndefined();
    await page.evaluate("window.__sameDocument = true");
    for (const selector of [
      "#plan-content a",
      "#plan-content div",
      "#plan-content svg",
      "#plan-content button",
      "#revision-content a",
    ])
      for (const element of await page.$$(selector))
        await element.click({ force: true, noWaitAfter: true }).catch(() => undefined);
    expect([await windowFlag(page, "__pwned"), await windowFlag(page, "__sameDocument")]).toEqual([
      undefined,
      true,
    ]);
    // The sanitizer removed every script, handler, javascript: URL, form, iframe and style.
    expect(
      await page.$$eval(
        ["#plan-content", "#revision-content"]
          .flatMap((root) =>
            [
              "script",
              "iframe",
              "form",
              "style",
              "[onerror]",
              "[onload]",
              "[onclick]",
              "[style]",
              "a[href^='javascript']",
            ].map((what) => `${root} ${what}`),
          )
          .join(", "),
        (found) => found.length,
      ),
    ).toBe(0);
    // A plan's raw HTML is shown as the text it is (docs/console.md, "Rendering rules").
    expect(await page.textContent("#plan-content")).toContain(`${payloads[6]}`);
    expect(await page.textContent("#plan-content")).toContain(`<script>window.__pwned = "script"</script>`);
    // The title, the author and the diff's lines are text, exactly as written.
    expect(await page.textContent("#plan-title")).toBe(`<script>window.__pwned='title'</script>`);
    expect(await page.textContent('#revisions tbody tr[data-revision="2"] td:nth-child(4)')).toBe(
      hostileName,
    );
    expect(await texts(page, "#diff span.diff-added")).toEqual(
      expect.arrayContaining([`+${payloads[0]}`, `+${payloads[1]}`, `+${payloads[5]}`]),
    );
    expect(
      await page.$$eval(
        "#diff *, #revisions tbody *",
        (found) => found.filter((e) => ["IMG", "SCRIPT", "SVG", "IFRAME"].includes(e.tagName)).length,
      ),
    ).toBe(0);

    // The CSP blocked the plan's image from another origin (no tracking pixel) and reported it.
    await waitFor(
      "the CSP report of the tracking pixel",
      async () =>
        cspReports().recent.some(
          (r) => r.directive === "img-src" && r.blocked === "https://tracker.example/pixel.png",
        ),
      10_000,
    );
    // The second wall: were the sanitizer bypassed, Trusted Types refuse an inline handler and a
    // string put into innerHTML (only DOMPurify's policy makes HTML), and the CSP reports both.
    const walls = await page.evaluate(`(() => {
      const results = [];
      const attempts = [
        () => document.createElement("img").setAttribute("onerror", "window.__pwned = 'bypass-handler'"),
        () => (document.getElementById("plan-content").innerHTML = "<img src=x onerror=\\"window.__pwned='bypass-html'\\">"),
      ];
      for (const attempt of attempts) {
        try {
          attempt();
          results.push("allowed");
        } catch (error) {
          results.push(error.name);
        }
      }
      return results;
    })()`);
    expect(walls).toEqual(["TypeError", "TypeError"]);
    await waitFor(
      "the CSP reports of both bypass attempts",
      async () => cspReports().recent.filter((r) => r.directive === "require-trusted-types-for").length >= 2,
      10_000,
    );
    expect(cspReports().total).toBeGreaterThan(before);
    // The server logged a window's first report by its directive (the rest are counted in one line
    // when the window closes: csp-report-intake.ts), without the blocked URL or the plan's text.
    const logged = log.lines.filter((line) => line.includes("console CSP violation reported"));
    const directives = logged.map((line) => (JSON.parse(line) as { directive: string }).directive);
    expect(directives.length).toBeGreaterThan(0);
    for (const directive of directives) expect(["img-src", "require-trusted-types-for"]).toContain(directive);
    expect(logged.filter((line) => /pwned|tracker\.example|onerror/.test(line))).toEqual([]);
    expect(await windowFlag(page, "__pwned")).toBeUndefined();
    await page.screenshot({ path: join(shots, "hostile-plan.png"), fullPage: true });
  });
});

const SECRET = "console-test-secret-0123456789-0123";

function token(claims: Record<string, unknown>, key = SECRET): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(String(claims.name ?? "someone"))
    .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
    .sign(new TextEncoder().encode(key));
}

describe("the plan console with auth on", () => {
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite", {
      env: { PLAN_HTTP_ADDRESS: "127.0.0.1:0", PLAN_AUTH_JWT_SECRET: SECRET },
    });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("sends the token typed in for its calls, keeps it out of storage and the address, and shows a refusal's code, reason and message", async () => {
    const alice = app.client(await token({ kind: "user", name: "Alice", workspaces: ["ws-a"] }));
    const taskId = "task-console-auth";
    await alice.tasks.createTask({ taskId, workspaceId: "ws-a", title: "a task" });
    await alice.plans.createPlan({ taskId, content: "# Alice's plan\n" });
    const stored = await planState(alice.plans, taskId);

    const { page } = await newPage();
    await page.goto(`${base}/console/`);
    const open = async (tokenText: string) => {
      await page.fill("#task-id", taskId);
      await page.fill("#token", tokenText);
      await page.click("#open");
    };
    const refusal = async () => [
      await page.textContent("#error-code"),
      await page.textContent("#error-reason"),
      await page.textContent("#error-message"),
    ];

    await open("");
    await waitForText(page, "#error-code", "UNAUTHENTICATED");
    expect(await refusal()).toEqual(["UNAUTHENTICATED", "TOKEN_MISSING", expect.stringMatching(/token/i)]);

    await open(await token({ kind: "user", name: "Alice", workspaces: ["ws-a"] }, "x".repeat(40)));
    await waitForText(page, "#error-reason", "TOKEN_INVALID");
    expect(await refusal()).toEqual(["UNAUTHENTICATED", "TOKEN_INVALID", expect.any(String)]);
    await page.screenshot({ path: join(shots, "refused-token.png"), fullPage: true });

    await open(await token({ kind: "agent", name: "Mallory", workspaces: ["ws-b"] }));
    await waitForText(page, "#error-reason", "TASK_NOT_REACHABLE");
    expect(await refusal()).toEqual(["PERMISSION_DENIED", "TASK_NOT_REACHABLE", expect.any(String)]);

    const aliceToken = await token({ kind: "user", name: "Alice", workspaces: ["ws-a"] });
    await open(aliceToken);
    await waitForText(page, "#plan-content", "Alice's plan");
    expect(await page.isHidden("#error")).toBe(true);
    await waitForText(page, "#status", "live");
    // The token is in no storage, cookie or address.
    const kept = await page.evaluate(
      "[localStorage.length, sessionStorage.length, document.cookie, location.href]",
    );
    expect(kept).toEqual([0, 0, "", `${base}/console/`]);
    // A read-only page: nothing changed.
    expect(await planState(alice.plans, taskId)).toEqual(stored);
  });
});
