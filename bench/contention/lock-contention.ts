/**
 * Benchmark (not a test): 8 concurrent writers appending to ONE task through 2 replica processes
 * on MariaDB, with the Redlock lock (3 Redis nodes) and without it (each replica's in-process lock
 * plus the database row lock: the baseline). Rounds alternate in one run; prints writes/s and
 * p50/p99 per round and the ratios of the medians.
 *
 *   npm run bench:contention
 *   BENCH_ROUNDS=5 BENCH_REPLICAS=1 PLAN_LOCK_MAX_BATCH=16 npm run bench:contention
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WriteMode } from "@taskplans/contract";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startRedisNodes } from "../../test/harness/databases/redis";
import { type Replica, startReplica } from "../../test/harness/servers/replica";
import { connect } from "../../test/harness/calls/rpc";

const WRITERS = 8;
// BENCH_REPLICAS=1 measures what the Redis lock costs a lone replica (nobody to hand the lease to).
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 2);
const WRITES_PER_WRITER = Number(process.env.BENCH_WRITES ?? 250);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

async function round(
  replicas: Replica[],
  taskId: string,
): Promise<{ rate: number; p50: number; p99: number }> {
  const writers = Array.from({ length: WRITERS }, (_, i) =>
    connect((replicas[i % replicas.length] as Replica).port),
  );
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    writers.map(async (writer, w) => {
      for (let i = 0; i < WRITES_PER_WRITER; i++) {
        const t0 = performance.now();
        await writer.plans.updatePlan({
          taskId,
          content: `- w${w} #${i}`,
          mode: WriteMode.WRITE_MODE_APPEND,
        });
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const writer of writers) writer.close();
  return { rate: latencies.length / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-contention-"));
  const mariadb = await startMariaDb();
  const nodes = await startRedisNodes(3);
  const results: Record<string, { rate: number; p50: number; p99: number }[]> = { baseline: [], redlock: [] };
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of ["baseline", "redlock"] as const) {
        const database = `c_${mode}_${r}`;
        await createDatabase(mariadb.port, database);
        const env: Record<string, string> = { PLAN_DATABASE_URL: mariadb.urlFor(database) };
        if (mode === "redlock") env.PLAN_REDIS_URLS = nodes.map((n) => n.url).join(",");
        // Lock settings to compare (PLAN_LOCK_MAX_BATCH=16 npm run bench:contention) reach the replicas.
        for (const [name, value] of Object.entries(process.env))
          if (mode === "redlock" && name.startsWith("PLAN_LOCK_") && value) env[name] = value;
        const replicas: Replica[] = [];
        for (let i = 0; i < REPLICAS; i++) replicas.push(await startReplica(env, logDir));
        try {
          const setup = connect(replicas[0]?.port ?? 0);
          const taskId = `hot-${mode}-${r}`;
          await setup.tasks.createTask({ taskId, workspaceId: "bench" });
          await setup.plans.createPlan({ taskId, content: "# Contended plan" });
          setup.close();
          await round(replicas, `${taskId}`); // warm-up on the same task
          results[mode]?.push(await round(replicas, taskId));
        } finally {
          for (const replica of replicas) await replica.stop();
        }
      }
    }
  } finally {
    for (const node of nodes) await node.stop();
    await mariadb.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
  const median = (mode: string, key: "rate" | "p50" | "p99") =>
    quantile(
      (results[mode] ?? []).map((x) => x[key]),
      0.5,
    );
  const lines = [
    `${WRITERS} writers x ${WRITES_PER_WRITER} appends to one task through ${REPLICAS} replica process(es), MariaDB, ${ROUNDS} alternating rounds`,
    "",
    "| lock | round | writes/s | p50 ms | p99 ms |",
    "| --- | ---: | ---: | ---: | ---: |",
  ];
  for (const mode of ["baseline", "redlock"]) {
    (results[mode] ?? []).forEach((x, i) =>
      lines.push(`| ${mode} | ${i + 1} | ${x.rate.toFixed(0)} | ${x.p50.toFixed(1)} | ${x.p99.toFixed(1)} |`),
    );
  }
  lines.push(
    "",
    `median throughput: redlock ${median("redlock", "rate").toFixed(0)} / baseline ${median("baseline", "rate").toFixed(0)} writes/s = ${(median("redlock", "rate") / median("baseline", "rate")).toFixed(2)}x (target >= 0.8x)`,
    `median p99: redlock ${median("redlock", "p99").toFixed(1)} / baseline ${median("baseline", "p99").toFixed(1)} ms = ${(median("redlock", "p99") / median("baseline", "p99")).toFixed(2)}x (target <= 3x)`,
    "",
  );
  process.stdout.write(lines.join("\n"));
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
