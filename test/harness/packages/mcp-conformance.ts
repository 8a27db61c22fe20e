import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { runToExit } from "../servers/processes";
import { repoRoot } from "../servers/repo-root";
import { run } from "./client-packages";

/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned with the Node 22 it needs in
 * scripts/tools/mcp-conformance) run in server mode against an MCP endpoint, and the committed
 * expected results it is judged by (test/integration/mcp/mcp-conformance.expected.yaml).
 */
const ROOT = repoRoot();

/** What the suite says of one check (its checks.json entries). */
export interface ConformanceCheck {
  readonly id: string;
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  readonly errorMessage?: string;
}

/** A scenario's expected outcome: pass, or fail with the reason it is by design. */
export type Expectation = { readonly pass: true } | { readonly pass: false; readonly reason: string };

/** The suite's command: the pinned Node 22 and the suite's entry point, installed on first use. */
export async function conformanceCommand(): Promise<string[]> {
  const dir = (await run(["bash", "scripts/npm-tools.sh", "mcp-conformance"])).trim().split("\n").pop() ?? "";
  const node = join(dir, "node_modules", `node-linux-${process.arch}`, "bin", "node");
  if (!existsSync(node)) throw new Error(`no Node 22 for linux-${process.arch} in ${dir}`);
  return [node, join(dir, "node_modules/@modelcontextprotocol/conformance/dist/index.js")];
}

/**
 * The expected results: `scenario: pass`, or `scenario: { fail: reason }`. An entry that is neither
 * (a fail without a reason) is an error, so that no failure is left unexplained.
 */
export function readExpectations(file: string): Map<string, Expectation> {
  const doc = parse(readFileSync(file, "utf8")) as { scenarios: Record<string, unknown> };
  const expected = new Map<string, Expectation>();
  for (const [scenario, entry] of Object.entries(doc.scenarios)) {
    if (entry === "pass") expected.set(scenario, { pass: true });
    else if (typeof entry === "object" && entry && typeof (entry as { fail?: unknown }).fail === "string")
      expected.set(scenario, { pass: false, reason: (entry as { fail: string }).fail });
    else throw new Error(`${file}: ${scenario} is neither "pass" nor { fail: <reason> }`);
  }
  return expected;
}

/** One run of the suite: its exit code (judged against the baseline), output and results. */
export interface SuiteRun {
  readonly code: number | null;
  readonly output: string;
  /** Each scenario's checks, by scenario name. */
  readonly scenarios: Map<string, readonly ConformanceCheck[]>;
}

/**
 * Runs the active server suite against `url`, with the expected failures as the suite's own
 * baseline (so its exit code is non-zero on an unexpected failure or a stale entry), saving results
 * under `dir`.
 */
export async function runServerSuite(
  url: string,
  expected: Map<string, Expectation>,
  dir: string,
): Promise<SuiteRun> {
  const baseline = join(dir, "baseline.yaml");
  const failing = [...expected].filter(([, e]) => !e.pass).map(([scenario]) => scenario);
  writeFileSync(baseline, stringify({ server: failing }));
  const out = join(dir, "results");
  const [node, suite] = await conformanceCommand();
  const argv = [node ?? "", suite ?? "", "server", "--url", url, "--expected-failures", baseline, "-o", out];
  const result = await runToExit(argv, { cwd: ROOT, env: process.env, timeoutMs: 300_000 });
  const scenarios = new Map<string, readonly ConformanceCheck[]>();
  for (const name of existsSync(out) ? readdirSync(out) : []) {
    // server-<scenario>-<ISO timestamp with - for :>
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(name)?.[1];
    if (scenario)
      scenarios.set(
        scenario,
        JSON.parse(readFileSync(join(out, name, "checks.json"), "utf8")) as ConformanceCheck[],
      );
  }
  return { code: result.code, output: result.stdout + result.stderr, scenarios };
}

/** The suite's rule: a scenario passes when none of its checks is a FAILURE or a WARNING. */
export function passed(checks: readonly ConformanceCheck[]): boolean {
  return !checks.some((check) => check.status === "FAILURE" || check.status === "WARNING");
}
