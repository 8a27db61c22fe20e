import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tracked } from "../../harness/servers/started-processes";

// `npm run soak` for about a minute per topology: the built soak program (dist-bench/bench/soak/soak.js,
// which scripts/check.sh compiles before Jest) runs npm start's entry point (dist/src/bin/main.js) on
// SQLite, then two of them on this run's MariaDB with three Redis nodes, under the mixed load. It
// must exit 0 and print its figures; and it must fail, with a message naming the check, when a
// bound is broken or an acknowledged write is missing.
const ROOT = join(__dirname, "..", "..", "..");
const SOAK = join(ROOT, "dist-bench", "bench", "soak", "soak.js");

interface SoakRun {
  readonly code: number | null;
  readonly stdout: string;
}

/** Runs the soak to its end; past `limitMs` it gets SIGTERM (it then stops what it started), SIGKILL 30 s later. */
function soak(env: Record<string, string>, limitMs: number): Promise<SoakRun> {
  return new Promise((resolve, reject) => {
    const child = tracked(
      spawn(process.execPath, [SOAK], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      }),
      "soak program",
    );
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const term = setTimeout(() => child.kill("SIGTERM"), limitMs);
    const kill = setTimeout(() => child.kill("SIGKILL"), limitMs + 30_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(term);
      clearTimeout(kill);
      resolve({ code, stdout });
    });
  });
}

/** The SOAK FAILED lines (empty when it passed), so a failure shows what failed. */
const failures = (run: SoakRun) => run.stdout.split("\n").filter((line) => /SOAK FAILED|^ {2}- /.test(line));

// About a minute of load; shorter change retention so the idle check at the end takes 12 s. The
// 45-s run shares two cores with another Jest worker, so its p99 trend gets a wide absolute floor:
// thirds of a few 5-s intervals show a neighbour's burst, not a trend (the 10-minute soak keeps 50 ms).
const SHORT = {
  SOAK_DURATION_MS: "45000",
  SOAK_PRUNE_INTERVAL_MS: "2000",
  SOAK_CHANGES_MAX_AGE_MS: "5000",
  SOAK_P99_FLOOR_MS: "500",
};

function expectFigures(stdout: string, topology: string, servers: readonly string[]): void {
  // Every interval: calls, health, RSS / CPU / event-loop delay per server, database size and rows.
  const interval = new RegExp(
    `^\\[${topology}\\] \\d+ s: [\\d,]+ calls, [\\d,]+ writes; health p50/p99/max [\\d.]+/[\\d.]+/[\\d.]+ ms; `,
    "m",
  );
  expect(stdout).toMatch(interval);
  for (const server of servers) {
    expect(stdout).toMatch(
      new RegExp(`${server} RSS \\d+ MB, CPU \\d+%, loop p50/p99/max [\\d.]+/[\\d.]+/[\\d.]+ ms`),
    );
  }
  expect(stdout).toMatch(
    new RegExp(
      `^\\[${topology}\\]   db [\\d.]+ MiB.* of bound [\\d.]+ MiB; rows: tasks [\\d,]+, task_plans [\\d,]+, task_plan_revisions [\\d,]+, task_plan_changes [\\d,]+, write_requests [\\d,]+`,
      "m",
    ),
  );
  // p50/p99 per call, every kind of operation of the mixed load among them.
  for (const call of [
    "UpdatePlan append (ledger)",
    "UpdatePlan replace",
    "EditPlan",
    "SavePlan",
    "GetPlan (partial)",
    "RestorePlanRevision",
    "RevertPlan",
    "WatchPlan delivery",
  ]) {
    expect(stdout).toMatch(
      new RegExp(
        `^\\[${topology}\\]   ${call.replace(/[()]/g, "\\$&")} +\\d+ calls +0 err  p50 +[\\d.]+  p99 +[\\d.]+ ms`,
        "m",
      ),
    );
  }
  // The summary: figures, a row per call, every check passed.
  expect(stdout).toMatch(/^## Soak summary \(seed \d+, 45 s of load per topology\)/m);
  expect(stdout).toMatch(/^\| verdict \| PASS \|/m);
  expect(stdout).toMatch(/^\| \(all writes\) \| [\d,]+ \| 0 \| [\d.]+ \| [\d.]+ \|/m);
  expect(stdout).toMatch(
    /^\| acknowledged writes present .* \| PASS: \d+ ledger \+ \d+ contended fragments, \d+ mixed writes/m,
  );
  expect(stdout).toMatch(
    /^\| change rows pruned .* \| PASS: overdue rows max 0, samples of a task over the count rule 0, left after \d+ s idle 0 \|/m,
  );
  expect(stdout).toMatch(/^soak: PASS$/m);
}

describe("the soak (npm run soak), one short run per topology", () => {
  beforeAll(() => {
    if (!existsSync(SOAK))
      throw new Error(`${SOAK} is missing: run 'npx tsc -p tsconfig.bench.json' (scripts/check.sh does)`);
  });

  it("keeps npm start's entry point on SQLite healthy, bounded and losing nothing for 45 s of mixed load", async () => {
    const run = await soak({ ...SHORT, SOAK_TOPOLOGY: "embedded" }, 240_000);
    expect([run.code, failures(run)]).toEqual([0, []]);
    expectFigures(run.stdout, "embedded", ["embedded"]);
  }, 300_000);

  it("keeps two replicas on one MariaDB with three Redis nodes healthy, bounded and losing nothing for 45 s", async () => {
    const run = await soak(
      { ...SHORT, SOAK_TOPOLOGY: "mariadb", SOAK_MARIADB_PORT: String(process.env.TEST_MARIADB_PORT) },
      240_000,
    );
    expect([run.code, failures(run)]).toEqual([0, []]);
    expectFigures(run.stdout, "mariadb", ["replica-a", "replica-b"]);
  }, 300_000);

  it("fails, naming the check, when a health check takes longer than its bound", async () => {
    const run = await soak({ ...SHORT, SOAK_TOPOLOGY: "embedded", SOAK_HEALTH_BOUND_MS: "0" }, 120_000);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^\[embedded\] STOPPING: health check of embedded took \d+ ms \(bound 0 ms\)/m,
    );
    expect(run.stdout).toMatch(/^SOAK FAILED \[embedded\] health check latency, max \(bound <= 0 ms\)/m);
    expect(run.stdout).toMatch(/^soak: FAIL$/m);
  }, 180_000);

  it("fails, naming the task and fragment, when an acknowledged append is missing from the plan", async () => {
    // SOAK_INJECT=lost-write: the soak records a fragment as acknowledged that it never sent, which
    // is what a server losing an acknowledged append looks like from the client.
    const run = await soak(
      { ...SHORT, SOAK_TOPOLOGY: "embedded", SOAK_DURATION_MS: "8000", SOAK_INJECT: "lost-write" },
      120_000,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^SOAK FAILED \[embedded\] acknowledged writes present .*\n {2}- lost-write: soak-\w+-ledger-\d+ \(ledger\): acknowledged fragment #\d+ of \d+ is missing/m,
    );
    expect(run.stdout).toMatch(/^soak: FAIL$/m);
  }, 180_000);
});
