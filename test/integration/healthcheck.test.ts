import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToExit } from "../harness/processes";
import { type Replica, startReplica } from "../harness/replica";

// The chart's `helm test` entry point exactly as shipped (dist/src/healthcheck.js, built by
// `npm run build`), against a replica on the embedded SQLite default.
const HEALTHCHECK = join(__dirname, "..", "..", "dist", "src", "healthcheck.js");
const healthcheck = (...args: string[]) =>
  runToExit([process.execPath, HEALTHCHECK, ...args], { timeoutMs: 60_000 });

let dir: string;
let replica: Replica;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "healthcheck-"));
  replica = await startReplica({ PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}` }, dir);
}, 60_000);

afterAll(async () => {
  await replica?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("healthcheck.js, the helm test entry point", () => {
  it("passes at once against a serving replica, with or without --retry-for", async () => {
    for (const args of [[], ["--retry-for", "30"]]) {
      const run = await healthcheck(...args, `127.0.0.1:${replica.port}`);
      expect([run.code, run.stderr]).toEqual([0, ""]);
      expect(run.stdout).toBe(
        `ok: 127.0.0.1:${replica.port}: taskplans.v1.PlanService SERVING; a plan read answered NOT_FOUND TASK_NOT_FOUND\n`,
      );
    }
  });

  it("fails at once with one line when nothing serves and no --retry-for is given", async () => {
    await replica.kill();
    try {
      const run = await healthcheck(`127.0.0.1:${replica.port}`);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(new RegExp(`^failed: 127\\.0\\.0\\.1:${replica.port}: .*\\n$`));
      expect(run.elapsedMs).toBeLessThan(20_000); // it did not wait: one probe with its 5 s deadline
    } finally {
      await replica.restart();
    }
  }, 60_000);

  it("with --retry-for, repeats a failed probe until the replica serves, and says how many probes it took", async () => {
    await replica.kill();
    const run = healthcheck("--retry-for", "40", `127.0.0.1:${replica.port}`);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await replica.restart();
    const result = await run;
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const probes = Number(/\(probe (\d+)\)\n$/.exec(result.stdout)?.[1]);
    expect(probes).toBeGreaterThan(1);
    expect(result.stdout).toMatch(
      /^ok: .* SERVING; a plan read answered NOT_FOUND TASK_NOT_FOUND \(probe \d+\)\n$/,
    );
  }, 90_000);

  it("with --retry-for, gives up once the seconds run out and prints the last failure", async () => {
    await replica.kill();
    try {
      const run = await healthcheck("--retry-for", "3", `127.0.0.1:${replica.port}`);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^failed: .* \(probe \d+\)\n$/);
    } finally {
      await replica.restart();
    }
  }, 60_000);

  it.each([
    [[]],
    [["--retry-for"]],
    [["--retry-for", "soon", "127.0.0.1:1"]],
    [["a:1", "b:2"]],
    [["--wait", "a:1"]],
  ])("refuses bad arguments %j with its usage line and exit code 2", async (args) => {
    const run = await healthcheck(...args);
    expect([run.code, run.stdout, run.stderr]).toEqual([
      2,
      "",
      "usage: healthcheck.js [--retry-for <seconds>] <host:port>\n",
    ]);
  });
});
