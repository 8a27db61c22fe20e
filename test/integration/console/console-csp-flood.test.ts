import { SignJWT } from "jose";
import { cspReports } from "../../../src/console/csp-reports";
import { curl } from "../../harness/calls/curl";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The console's CSP report endpoint under a flood (docs/console.md, "CSP reports"; issue 54,
// defect 5): what reaches the log is bounded in lines and bytes whatever is posted, the endpoint is
// rate-limited, and with auth on a report without a valid token is counted, never logged or kept.

const SECRET = "csp-flood-test-secret-0123456789-012";

/** A body of `count` Reporting API reports, each with `directive`, up to 16 KiB. */
function batch(count: number, directive = "img-src"): string {
  return JSON.stringify(
    Array.from({ length: count }, (_, i) => ({
      type: "csp-violation",
      body: { effectiveDirective: directive, blockedURL: `https://x.example/${i}` },
    })),
  );
}

const post = (base: string, body: string, headers: string[] = []) =>
  curl(
    [
      "-X",
      "POST",
      "-H",
      "content-type: application/reports+json",
      ...headers.flatMap((h) => ["-H", h]),
      "--data-binary",
      "@-",
      `${base}/console/csp-report`,
    ],
    body,
  );

const reportLines = (lines: string[]) => lines.filter((line) => line.includes("CSP violation"));

/** The value of one series of /metrics. */
async function metric(app: TestApp, series: string): Promise<number> {
  const text = (await curl([`http://127.0.0.1:${app.metricsPort}/metrics`])).body;
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return Number(line?.split(" ")[1]);
}

describe("the CSP report endpoint under a flood (auth off)", () => {
  const log = capturingLogger();
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite", { overrides: { logger: log.logger } });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(() => app.stop());

  it("logs a flood in a bounded number of short lines, keeps a bounded list, and refuses past the rate limit", async () => {
    const body = batch(160); // about 16 KiB
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(16 * 1024);
    const longDirective = JSON.stringify({
      "csp-report": { "effective-directive": "x".repeat(16_000).slice(0, 16_000), "blocked-uri": "inline" },
    }).slice(0, 16 * 1024);
    const statuses: number[] = [];
    let sent = 0;
    for (let i = 0; i < 40; i++) {
      const answer = await post(base, i === 1 ? longDirective : body);
      sent += Buffer.byteLength(i === 1 ? longDirective : body);
      statuses.push(answer.status);
    }
    // 30 bodies a minute per address; the rest are refused 429 with Retry-After, unread.
    expect(statuses.filter((s) => s === 204)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual(Array(10).fill(429));
    const limited = await post(base, body);
    expect([limited.status, Number(limited.headers["retry-after"])]).toEqual([429, expect.any(Number)]);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    // The memory kept: the newest 50 reports, each field cut short.
    const { recent } = cspReports();
    expect(recent.length).toBeLessThanOrEqual(50);
    for (const report of recent) expect(report.directive.length).toBeLessThanOrEqual(64);

    await app.stop(); // writes the window's line of counts
    const lines = reportLines(log.lines);
    const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
    console.log(
      `CSP flood: ${sent} bytes in 40 bodies (30 admitted, the rest 429) -> ${lines.length} log lines, ${bytes} bytes`,
    );
    // Before: one line per report (4,641 lines) and the 16,000-character directive verbatim.
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(bytes).toBeLessThan(2048);
    expect(lines.join("")).not.toContain("x".repeat(100));
    const summary = JSON.parse(lines.at(-1) ?? "{}") as { reports?: number; byDirective?: object };
    // 29 bodies of 160 reports, 10 read from each; the long directive counts as "other".
    expect(summary).toMatchObject({ reports: 290, byDirective: { "img-src": 289, other: 1 } });
  });
});

describe("the CSP report endpoint with auth on", () => {
  const log = capturingLogger();
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite", {
      env: { PLAN_AUTH_JWT_SECRET: SECRET },
      overrides: { logger: log.logger },
    });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(() => app.stop());

  it("counts a report without a valid token but neither logs nor keeps it; a token's report is kept and logged", async () => {
    const before = cspReports().total;
    const unauthenticated = await metric(
      app,
      'taskplans_console_csp_reports_total{outcome="unauthenticated"}',
    );
    const one = JSON.stringify({
      "csp-report": { "effective-directive": "script-src-elem", "blocked-uri": "inline" },
    });
    expect((await post(base, one)).status).toBe(204);
    expect((await post(base, one, ["authorization: Bearer not-a-token"])).status).toBe(204);
    expect(await metric(app, 'taskplans_console_csp_reports_total{outcome="unauthenticated"}')).toBe(
      unauthenticated + 2,
    );
    expect(cspReports().total).toBe(before);
    expect(reportLines(log.lines)).toEqual([]);

    const token = await new SignJWT({ kind: "user", name: "Alice", workspaces: ["ws-a"] })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("alice")
      .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
      .sign(new TextEncoder().encode(SECRET));
    expect((await post(base, one, [`authorization: Bearer ${token}`])).status).toBe(204);
    expect(cspReports().total).toBe(before + 1);
    expect(
      reportLines(log.lines).map((line) => (JSON.parse(line) as { directive: string }).directive),
    ).toEqual(["script-src-elem"]);
  });
});
