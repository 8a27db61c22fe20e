/**
 * Benchmark (not a test): what the service costs over the statements it sends. MariaDB with durable
 * commits and 3 Redis nodes; 100-byte appends through the client package against a replica process,
 * and the raw baseline (bench/overhead-raw.ts: the same statements with mysql2 and Redlock, no gRPC,
 * no TypeORM, no service code) in a process of its own. Each is warmed up with two appends per task
 * before it is measured (the JIT has then seen the append). Rounds alternate; medians are compared.
 *
 *   npm run bench:overhead
 *   BENCH_ROUNDS=5 BENCH_APPENDS=5000 npm run bench:overhead
 *   BENCH_VARIANTS=tls,mtls,tracing npm run bench:overhead   # also the service with those on
 *   BENCH_VARIANTS=tls,mtls,tracing BENCH_VARIANTS_ONLY=1 npm run bench:overhead   # only those rows
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection, type Connection, type RowDataPacket } from "mysql2/promise";
import { WriteMode } from "@taskplans/client";
import { createDatabase, type MariaDb, startMariaDb } from "../../test/harness/databases/mariadb";
import { type RedisNode, startRedisNodes } from "../../test/harness/databases/redis";
import { type Replica, startReplica } from "../../test/harness/servers/replica";
import { connect } from "../../test/harness/calls/rpc";
import type { RawJob, RawResult } from "./overhead-raw";
import { type Variant, variantsFrom } from "./overhead-variants";
import { processCpuMs } from "../shared/process-stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TASKS = 1000;
const IN_FLIGHT = 16;
const APPENDS = Number(process.env.BENCH_APPENDS ?? 3000);
const ONE_WRITER_APPENDS = Number(process.env.BENCH_ONE_WRITER_APPENDS ?? 400);
const SIZE_APPENDS = 200;
const FRAGMENT_BYTES = 100;
// Only the plain service against its variants (BENCH_VARIANTS), skipping the raw, ceiling and size runs.
const VARIANTS_ONLY = process.env.BENCH_VARIANTS_ONLY === "1";
const VARIANT_LABEL = "1,000 tasks, 16 in flight, Redis";

interface Run {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuMsPerAppend: number;
}

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const median = (values: readonly number[]) => quantile(values, 0.5);

async function withPool<T>(
  items: readonly T[],
  inFlight: number,
  work: (item: T, i: number) => Promise<void>,
) {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i] as T, i);
      }
    }),
  );
}

/** How a run reaches its replica: plaintext, or a variant's client (TLS). */
type Connector = (port: number) => ReturnType<typeof connect>;
const plaintext: Connector = (port) => connect(port);

async function seed(
  replica: Replica,
  tasks: readonly string[],
  planBytes: number,
  connectTo: Connector,
): Promise<void> {
  const client = connectTo(replica.port);
  const content = "# Plan\n".padEnd(planBytes, "x");
  await withPool(tasks, IN_FLIGHT, async (taskId) => {
    await client.tasks.createTask({ taskId, workspaceId: "bench" });
    await client.plans.createPlan({ taskId, content });
  });
  client.close();
}

const warmupAppends = (tasks: readonly string[], appends: number) => Math.min(2 * tasks.length, appends);

/**
 * `appends` measured appends, after `warmup` unmeasured ones (by default two per task, at most
 * `appends`): the service, the ceiling and the raw baseline are all warmed up on the operation they
 * are measured on, the same way.
 */
async function serviceRun(
  replica: { readonly port: number; readonly pid: number },
  tasks: readonly string[],
  appends: number,
  inFlight: number,
  connectTo: Connector = plaintext,
  warmup = warmupAppends(tasks, appends),
): Promise<Run> {
  if (warmup > 0) await serviceRun(replica, tasks, warmup, inFlight, connectTo, 0);
  const clients = Array.from({ length: Math.min(inFlight, 4) }, () => connectTo(replica.port));
  const latencies: number[] = [];
  const cpuBefore = processCpuMs(replica.pid);
  const started = performance.now();
  await withPool(
    Array.from({ length: appends }, (_, i) => i),
    inFlight,
    async (i) => {
      const t0 = performance.now();
      await clients[i % clients.length]?.plans.updatePlan({
        taskId: tasks[i % tasks.length],
        content: `- append ${i} `.padEnd(FRAGMENT_BYTES, "x"),
        mode: WriteMode.WRITE_MODE_APPEND,
      });
      latencies.push(performance.now() - t0);
    },
  );
  const elapsed = performance.now() - started;
  const cpuMs = processCpuMs(replica.pid) - cpuBefore;
  for (const client of clients) client.close();
  return {
    rate: appends / (elapsed / 1000),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    cpuMsPerAppend: cpuMs / appends,
  };
}

function rawRun(job: RawJob): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, "overhead-raw.js"), JSON.stringify(job)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`raw baseline exited ${code}`));
      const result = JSON.parse(out) as RawResult;
      resolve({
        rate: job.appends / (result.elapsedMs / 1000),
        p50: quantile(result.latenciesMs, 0.5),
        p99: quantile(result.latenciesMs, 0.99),
        cpuMsPerAppend: result.cpuMs / job.appends,
      });
    });
  });
}

/** The raw append behind a bare grpc-js server (bench/overhead-ceiling.ts), run through the same client. */
async function ceilingRun(
  job: { databaseUrl: string; redisUrls: readonly string[] },
  tasks: readonly string[],
  appends: number,
  inFlight: number,
): Promise<Run> {
  const child = spawn(process.execPath, [join(__dirname, "overhead-ceiling.js"), JSON.stringify(job)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`ceiling server exited ${code}`)));
    });
    return await serviceRun({ port, pid: child.pid ?? -1 }, tasks, appends, inFlight);
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
}

let databases = 0;
/** A fresh database with `tasks` seeded through a replica; `use` gets the replica (kept running) or not. */
async function withSeededDatabase<T>(
  bench: { mariadb: MariaDb; logDir: string },
  env: Record<string, string>,
  tasks: readonly string[],
  planBytes: number,
  use: (replica: Replica, databaseUrl: string) => Promise<T>,
  variant: Variant | null = null,
): Promise<T> {
  const database = `o_${databases++}`;
  await createDatabase(bench.mariadb.port, database);
  const databaseUrl = bench.mariadb.urlFor(database);
  const replica = await startReplica(
    { PLAN_DATABASE_URL: databaseUrl, ...env, ...variant?.env },
    bench.logDir,
    null,
    variant?.tls ? { tls: variant.tls } : {},
  );
  try {
    await seed(replica, tasks, planBytes, variant ? (port) => variant.connect(port) : plaintext);
    return await use(replica, databaseUrl);
  } finally {
    await replica.stop();
  }
}

async function statusBytes(admin: Connection): Promise<number> {
  const [rows] = await admin.query<RowDataPacket[]>(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Bytes_received', 'Bytes_sent')",
  );
  return rows.reduce((sum, row) => sum + Number(row.Value), 0);
}

/**
 * The queries one append sends, literals replaced by ?, read from MariaDB's general log (a query of
 * several statements spans several lines of it).
 */
async function statementShapes(
  admin: Connection,
  logFile: string,
  action: () => Promise<void>,
): Promise<string[]> {
  rmSync(logFile, { force: true });
  await admin.query(`SET GLOBAL general_log_file = ${admin.escape(logFile)}`);
  await admin.query("SET GLOBAL general_log = 1");
  await action();
  await admin.query("SET GLOBAL general_log = 0");
  const adminId = (await admin.query<RowDataPacket[]>("SELECT CONNECTION_ID() AS id"))[0][0]?.id;
  const entries: { connection: number; query: string }[] = [];
  for (const line of readFileSync(logFile, "utf8").split("\n")) {
    const entry = /^(?:\S+\s+\S+)?\s+(\d+) (\w[\w ]*?)\t(.*)$/.exec(line);
    if (entry)
      entries.push({ connection: Number(entry[1]), query: entry[2] === "Query" ? (entry[3] ?? "") : "" });
    else if (entries.length > 0 && line !== "")
      (entries[entries.length - 1] as { query: string }).query += `\n${line}`;
  }
  return entries
    .filter((e) => e.query !== "" && e.connection !== Number(adminId))
    .map((e) =>
      e.query
        .replace(/'(?:[^'\\]|\\.)*'/g, "?")
        .replace(/\b\d+\b/g, "?")
        .replace(/\bNULL\b/g, "?"),
    );
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-overhead-"));
  // Before the servers start: a variant that cannot be set up leaves nothing running.
  const { variants, stop: stopVariants } = await variantsFrom(process.env.BENCH_VARIANTS, logDir);
  const mariadb = await startMariaDb({ durable: true });
  const nodes: RedisNode[] = await startRedisNodes(3);
  const redisUrls = nodes.map((n) => n.url);
  const admin = await createConnection({ host: "127.0.0.1", port: mariadb.port, user: "root" });
  const bench = { mariadb, logDir };
  const tasks = Array.from({ length: TASKS }, (_, i) => `task-${i}`);
  const results: Record<string, Run[]> = {};
  const push = (key: string, run: Run) => (results[key] ??= []).push(run);
  // The service runs as a fleet of this release would: the newest revision holds its content at HEAD.
  const atHead = { PLAN_REVISION_CONTENT_AT_HEAD: "true" };
  const withRedis = { PLAN_REDIS_URLS: redisUrls.join(","), ...atHead };
  let sameStatements = "";
  const sizes: { planBytes: number; p50: number; bytesPerAppend: number }[] = [];
  try {
    if (VARIANTS_ONLY) {
      for (let round = 0; round < ROUNDS; round++) {
        push(
          `${VARIANT_LABEL}|service`,
          await withSeededDatabase(bench, withRedis, tasks, 200, (r) =>
            serviceRun(r, tasks, APPENDS, IN_FLIGHT),
          ),
        );
        await runVariants(bench, variants, withRedis, tasks, push);
      }
      return void process.stdout.write(variantLines(results, variants).join("\n"));
    }
    // 0. The baseline sends what the service sends: compare one append of each, statement by statement.
    await withSeededDatabase(bench, withRedis, ["shape-task"], 200, async (replica, databaseUrl) => {
      const client = connect(replica.port);
      const one = () =>
        client.plans.updatePlan({ taskId: "shape-task", content: "- x", mode: WriteMode.WRITE_MODE_APPEND });
      await one(); // the first append coalesces like every later one
      const service = await statementShapes(
        admin,
        join(logDir, "service.log"),
        async () => void (await one()),
      );
      client.close();
      const raw = await statementShapes(admin, join(logDir, "raw.log"), async () => {
        await rawRun({
          databaseUrl,
          redisUrls,
          tasks: ["shape-task"],
          appends: 1,
          inFlight: 1,
          fragmentBytes: 3,
        });
      });
      // The driver's own set-up queries on connect; an append's first query also begins with a SET
      // (the session's bounds), and carries START TRANSACTION.
      const rawAppend = raw.filter(
        (s) => !/^(SET |SELECT @@|SHOW )/.test(s) || s.includes("START TRANSACTION"),
      );
      sameStatements =
        JSON.stringify(service) === JSON.stringify(rawAppend)
          ? `yes (${service.length} queries per append)`
          : `NO\nservice:\n${service.join("\n")}\nraw:\n${rawAppend.join("\n")}`;
    });

    for (let round = 0; round < ROUNDS; round++) {
      for (const [label, env, urls] of [
        ["1,000 tasks, 16 in flight, Redis", withRedis, redisUrls],
        ["1,000 tasks, 16 in flight, no Redis", atHead, []],
      ] as const) {
        push(
          `${label}|service`,
          await withSeededDatabase(bench, env, tasks, 200, (r) => serviceRun(r, tasks, APPENDS, IN_FLIGHT)),
        );
        push(
          `${label}|raw`,
          await withSeededDatabase(bench, env, tasks, 200, (_, databaseUrl) =>
            rawRun({
              databaseUrl,
              redisUrls: urls,
              tasks,
              appends: APPENDS,
              warmupAppends: warmupAppends(tasks, APPENDS),
              inFlight: IN_FLIGHT,
              fragmentBytes: FRAGMENT_BYTES,
            }),
          ),
        );
        push(
          `${label}|ceiling`,
          await withSeededDatabase(bench, env, tasks, 200, (_, databaseUrl) =>
            ceilingRun({ databaseUrl, redisUrls: urls }, tasks, APPENDS, IN_FLIGHT),
          ),
        );
      }
      // The same service workload with each variant on, in the same round.
      await runVariants(bench, variants, withRedis, tasks, push);
      const one = ["one-task"];
      const label = "one task, one writer, Redis";
      push(
        `${label}|service`,
        await withSeededDatabase(bench, withRedis, one, 200, (r) =>
          serviceRun(r, one, ONE_WRITER_APPENDS, 1),
        ),
      );
      push(
        `${label}|raw`,
        await withSeededDatabase(bench, withRedis, one, 200, (_, databaseUrl) =>
          rawRun({
            databaseUrl,
            redisUrls,
            tasks: one,
            appends: ONE_WRITER_APPENDS,
            warmupAppends: warmupAppends(one, ONE_WRITER_APPENDS),
            inFlight: 1,
            fragmentBytes: FRAGMENT_BYTES,
          }),
        ),
      );
      push(
        `${label}|ceiling`,
        await withSeededDatabase(bench, withRedis, one, 200, (_, databaseUrl) =>
          ceilingRun({ databaseUrl, redisUrls }, one, ONE_WRITER_APPENDS, 1),
        ),
      );
    }

    // Plan size: one writer, p50 and bytes exchanged with MariaDB per append at 1 KiB and 200 KiB.
    for (const planBytes of [1024, 200 * 1024]) {
      const p50s: number[] = [];
      const bytes: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // One append to each of SIZE_APPENDS tasks, so every append meets a plan of exactly this size.
        const sized = Array.from({ length: SIZE_APPENDS }, (_, i) => `sized-${planBytes}-${i}`);
        await withSeededDatabase(bench, withRedis, sized, planBytes, async (replica) => {
          const before = await statusBytes(admin);
          const run = await serviceRun(replica, sized, SIZE_APPENDS, 1, plaintext, 0);
          bytes.push((await statusBytes(admin)) - before);
          p50s.push(run.p50);
        });
      }
      sizes.push({ planBytes, p50: median(p50s), bytesPerAppend: median(bytes) / SIZE_APPENDS });
    }
  } finally {
    await stopVariants();
    await admin.end();
    for (const node of nodes) await node.stop();
    await mariadb.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
  print(results, sizes, sameStatements, variants);
}

/** The plain service's workload once with each variant on (BENCH_VARIANTS), in the current round. */
async function runVariants(
  bench: { mariadb: MariaDb; logDir: string },
  variants: readonly Variant[],
  env: Record<string, string>,
  tasks: readonly string[],
  push: (key: string, run: Run) => void,
): Promise<void> {
  for (const variant of variants) {
    push(
      `variant|${variant.name}`,
      await withSeededDatabase(
        bench,
        env,
        tasks,
        200,
        (r) => serviceRun(r, tasks, APPENDS, IN_FLIGHT, (port) => variant.connect(port)),
        variant,
      ),
    );
  }
}

function variantLines(results: Record<string, Run[]>, variants: readonly Variant[]): string[] {
  const m = (key: string, field: keyof Run) => median((results[key] ?? []).map((r) => r[field]));
  const plain = `${VARIANT_LABEL}|service`;
  return [
    `Variants (MariaDB with durable commits, 3 Redis nodes; ${VARIANT_LABEL}, ${APPENDS} appends of ${FRAGMENT_BYTES} bytes; ${ROUNDS} rounds, each variant beside the plain service in every round; medians):`,
    "",
    "| service | appends/s | p99 ms | CPU per append ms | rate vs plain | CPU vs plain |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    `| plain (plaintext, tracing off) | ${m(plain, "rate").toFixed(0)} | ${m(plain, "p99").toFixed(1)} | ${m(plain, "cpuMsPerAppend").toFixed(3)} | 1.00x | 1.00x |`,
    ...variants.map((variant) => {
      const key = `variant|${variant.name}`;
      return `| ${variant.name} | ${m(key, "rate").toFixed(0)} | ${m(key, "p99").toFixed(1)} | ${m(key, "cpuMsPerAppend").toFixed(3)} | ${(m(key, "rate") / m(plain, "rate")).toFixed(2)}x | ${(m(key, "cpuMsPerAppend") / m(plain, "cpuMsPerAppend")).toFixed(2)}x |`;
    }),
    "",
  ];
}

function print(
  results: Record<string, Run[]>,
  sizes: { planBytes: number; p50: number; bytesPerAppend: number }[],
  sameStatements: string,
  variants: readonly Variant[],
): void {
  const m = (key: string, field: keyof Run) => median((results[key] ?? []).map((r) => r[field]));
  const lines = [
    `MariaDB (durable commits), 3 Redis nodes, ${FRAGMENT_BYTES}-byte appends, ${ROUNDS} alternating rounds, medians`,
    `raw baseline sends the same statements as the service: ${sameStatements}`,
    "",
    "| workload | service appends/s | p99 ms | raw appends/s | p99 ms | ratio | target |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const targets: Record<string, number> = {
    "1,000 tasks, 16 in flight, Redis": 0.7,
    "1,000 tasks, 16 in flight, no Redis": 0.7,
    "one task, one writer, Redis": 0.9,
  };
  for (const [label, target] of Object.entries(targets)) {
    const ratio = m(`${label}|service`, "rate") / m(`${label}|raw`, "rate");
    lines.push(
      `| ${label} | ${m(`${label}|service`, "rate").toFixed(0)} | ${m(`${label}|service`, "p99").toFixed(1)} | ${m(`${label}|raw`, "rate").toFixed(0)} | ${m(`${label}|raw`, "p99").toFixed(1)} | ${ratio.toFixed(2)}x | >= ${target}x ${ratio >= target ? "met" : "NOT met"} |`,
    );
  }
  lines.push(
    "",
    "Ceiling: the raw statements behind a bare grpc-js server (bench/overhead-ceiling.ts), through the same client:",
    "",
    "| workload | ceiling appends/s | p99 ms | ceiling / raw | service / ceiling | CPU per append ms, ceiling vs raw |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const label of Object.keys(targets)) {
    const ceiling = m(`${label}|ceiling`, "rate");
    lines.push(
      `| ${label} | ${ceiling.toFixed(0)} | ${m(`${label}|ceiling`, "p99").toFixed(1)} | ${(ceiling / m(`${label}|raw`, "rate")).toFixed(2)}x | ${(m(`${label}|service`, "rate") / ceiling).toFixed(2)}x | ${m(`${label}|ceiling`, "cpuMsPerAppend").toFixed(3)} vs ${m(`${label}|raw`, "cpuMsPerAppend").toFixed(3)} |`,
    );
  }
  const cpuKey = "1,000 tasks, 16 in flight, Redis";
  const cpuRatio = m(`${cpuKey}|service`, "cpuMsPerAppend") / m(`${cpuKey}|raw`, "cpuMsPerAppend");
  // The service's own part of an append's CPU: against the same statements behind a bare grpc-js server.
  const ownRatio = m(`${cpuKey}|service`, "cpuMsPerAppend") / m(`${cpuKey}|ceiling`, "cpuMsPerAppend");
  const [small, large] = sizes;
  const sizeRatio = (large?.p50 ?? 0) / (small?.p50 ?? 1);
  lines.push(
    "",
    `CPU per append (${cpuKey}): service process ${m(`${cpuKey}|service`, "cpuMsPerAppend").toFixed(3)} ms, raw driver process ${m(`${cpuKey}|raw`, "cpuMsPerAppend").toFixed(3)} ms = ${cpuRatio.toFixed(2)}x (target <= 2x ${cpuRatio <= 2 ? "met" : "NOT met"})`,
    `CPU per append (${cpuKey}): service process ${m(`${cpuKey}|service`, "cpuMsPerAppend").toFixed(3)} ms, ceiling server ${m(`${cpuKey}|ceiling`, "cpuMsPerAppend").toFixed(3)} ms = ${ownRatio.toFixed(2)}x the ceiling's (target <= 1.10x ${ownRatio <= 1.1 ? "met" : "NOT met"})`,
    "",
    "| plan | append p50 ms | bytes exchanged with MariaDB per append |",
    "| --- | ---: | ---: |",
    ...sizes.map(
      (s) => `| ${s.planBytes / 1024} KiB | ${s.p50.toFixed(2)} | ${s.bytesPerAppend.toFixed(0)} |`,
    ),
    `p50 200 KiB / 1 KiB = ${sizeRatio.toFixed(2)} (target <= 1.5 ${sizeRatio <= 1.5 ? "met" : "NOT met"}); bytes 200 KiB / 1 KiB = ${((large?.bytesPerAppend ?? 0) / (small?.bytesPerAppend ?? 1)).toFixed(1)}x (target: independent of size)`,
    "",
  );
  if (variants.length > 0) lines.push(...variantLines(results, variants));
  process.stdout.write(lines.join("\n"));
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
