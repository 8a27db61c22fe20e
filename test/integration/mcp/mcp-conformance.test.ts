import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ConformanceCheck,
  type Expectation,
  passed,
  readExpectations,
  runServerSuite,
  type SuiteRun,
} from "../../harness/packages/mcp-conformance";
import { freePort } from "../../harness/servers/free-port";
import { stopProcess, waitFor } from "../../harness/servers/processes";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The MCP conformance suite, written by the protocol's maintainers, run as a new user would run it
// against the shipped `taskplans-mcp --http` (mcp/dist/main.js), and judged by the committed file of
// expected results: each scenario passes, or fails for a reason written there.
const EXPECTED = join(__dirname, "mcp-conformance.expected.yaml");

const failures = (checks: readonly ConformanceCheck[]) =>
  checks
    .filter((check) => check.status === "FAILURE" || check.status === "WARNING")
    .map((check) => `${check.id}: ${check.errorMessage ?? check.status}`);

describe("the MCP conformance suite against taskplans-mcp --http", () => {
  let app: TestApp;
  let mcp: ChildProcess;
  let dir: string;
  let suite: SuiteRun;
  let expected: Map<string, Expectation>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mcp-conformance-"));
    app = await startTestApp("sqlite");
    const { taskId } = await app.planWith("# Plan\n\n- [ ] step one", "Conformance");
    const port = await freePort();
    const main = join(__dirname, "..", "..", "..", "mcp", "dist", "main.js");
    const args = [main, "--target", `127.0.0.1:${app.port}`, "--task-id", taskId, "--http", String(port)];
    mcp = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    mcp.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor("taskplans-mcp --http", async () => stderr.includes("allowed hosts"), 15_000);
    expected = readExpectations(EXPECTED);
    suite = await runServerSuite(`http://127.0.0.1:${port}/mcp`, expected, dir);
    const passing = [...suite.scenarios.values()].filter(passed).length;
    const total = /Total: [^\n]*/.exec(suite.output)?.[0] ?? "";
    process.stdout.write(
      `MCP conformance: ${passing} scenarios passed, ${suite.scenarios.size - passing} failed (checks: ${total})\n`,
    );
  }, 600_000);
  afterAll(async () => {
    if (mcp) await stopProcess(mcp);
    await app?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs exactly the scenarios the expected-results file lists", () => {
    expect([...suite.scenarios.keys()].sort()).toEqual([...expected.keys()].sort());
  });

  it("each scenario passes or fails as the file says (a failure only for the reason written there)", () => {
    const outcome = new Map(
      [...suite.scenarios].map(([scenario, checks]) => [
        scenario,
        passed(checks) ? "pass" : `fail: ${failures(checks).join("; ")}`,
      ]),
    );
    const want = new Map(
      [...expected].map(([scenario, e]) => [scenario, e.pass ? "pass" : expect.stringMatching(/^fail: /)]),
    );
    expect(Object.fromEntries(outcome)).toEqual(Object.fromEntries(want));
  });

  it("the suite itself, given the expected failures as its baseline, exits 0 (no regression, no stale entry)", () => {
    expect([suite.code, suite.output.slice(-2000)]).toEqual([0, expect.any(String)]);
  });
});
