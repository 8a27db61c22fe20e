/**
 * Measurement (not a test) of issue 40's abuse: one caller sends ~90-byte RevertPlan calls, each
 * reverting one of 4 tasks to a revision of 262,143 bytes, as fast as one connection allows. Prints
 * what it stored (taskplans_stored_bytes_total), how long it took, and how the calls ended, with the
 * write budget off and at its auth-on default (64 MiB per 60 s). Auth stays off here, so the budget
 * is set explicitly and keyed by the client's address: the same policy a token subject meets. The
 * rate limit is off in both runs, so only the budgets differ.
 *
 *   npm run bench:write-budget                 # embedded SQLite, 1,000 calls per run
 *   BENCH_CALLS=400 BENCH_DATABASE_URL=mysql://... npm run bench:write-budget
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { startApp } from "../../src/app";
import { DEFAULT_WRITE_BUDGET_BYTES, loadConfig } from "../../src/config/config";
import { RevertPlanRequest } from "@taskplans/contract";
import { reasonOf } from "@taskplans/client";
import { connect } from "../../test/harness/calls/rpc";

const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const TASKS = 4;
const BIG = `# Big\n${"x".repeat(262_143 - 7)}\n`;

async function storedBytes(metricsPort: number): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith("taskplans_stored_bytes_total "));
  return Number(line?.split(" ")[1] ?? 0);
}

async function run(label: string, budgetBytes: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-bench-"));
  const config = loadConfig({
    PLAN_GRPC_ADDRESS: "127.0.0.1:0",
    PLAN_HTTP_ADDRESS: "127.0.0.1:0",
    PLAN_DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(dir, "bench.sqlite")}`,
    PLAN_LOG_LEVEL: "silent",
    PLAN_METRICS_ADDRESS: "127.0.0.1:0",
    PLAN_RATE_LIMIT_WRITES: "0",
    PLAN_COALESCE_WINDOW_MS: "0", // the big revision stays big: the next save does not rewrite it
    PLAN_WRITE_BUDGET_BYTES: String(budgetBytes),
    PLAN_WRITE_BUDGET_WINDOW_MS: "60000",
  });
  const app = await startApp(config, { logger: pino({ level: "silent" }) });
  const { plans, tasks, close } = connect(app.port);
  try {
    const targets: { taskId: string; revisionId: string }[] = [];
    for (let i = 0; i < TASKS; i++) {
      const taskId = `abuse-${i}-${Date.now()}`;
      await tasks.createTask({ taskId, workspaceId: "bench" });
      const big = await plans.savePlan({ taskId, content: BIG });
      await plans.savePlan({ taskId, content: "short" });
      targets.push({ taskId, revisionId: big.revision?.id ?? "" });
    }
    const before = await storedBytes(app.metricsPort ?? 0);
    const outcomes = new Map<string, number>();
    const requestBytes: number[] = [];
    const started = performance.now();
    for (let call = 0; call < CALLS; call++) {
      const request = RevertPlanRequest.fromPartial(targets[call % TASKS] ?? {});
      requestBytes.push(RevertPlanRequest.encode(request).finish().length);
      const outcome = await plans.revertPlan(request).then(
        () => "OK",
        (error: unknown) => reasonOf(error) ?? "error",
      );
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    const seconds = (performance.now() - started) / 1000;
    const stored = (await storedBytes(app.metricsPort ?? 0)) - before;
    const ends = [...outcomes].map(([outcome, n]) => `${outcome} ${n}`).join(", ");
    return (
      `${label.padEnd(26)} ${(stored / 1e6).toFixed(1).padStart(7)} MB stored in ${seconds.toFixed(1)} s` +
      ` (${(stored / 1e6 / seconds).toFixed(1)} MB/s); ${CALLS} calls of ${requestBytes[0]} bytes: ${ends}`
    );
  } finally {
    close();
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`RevertPlan abuse: ${CALLS} calls over ${TASKS} tasks, one connection, rate limit off`);
  console.log(await run("write budget off", 0));
  console.log(await run("write budget 64 MiB/60 s", DEFAULT_WRITE_BUDGET_BYTES));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
