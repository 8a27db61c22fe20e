/**
 * Benchmark (not a test): WatchPlan fan-out across replicas. MariaDB with durable commits, 3 Redis
 * nodes, two replica processes: 1,000 watchers (10 per task, 100 tasks) on replica A, writes through
 * replica B. Prints delivery latency from commit to receipt at 100 writes/s, writer throughput
 * (16 in flight) with and without the watchers in alternating rounds of the same run (medians), and
 * each replica's RSS (now and peak, taken with the watchers open).
 *
 *   npm run bench:watch
 *   BENCH_WATCHERS=1000 BENCH_SECONDS=20 npm run bench:watch
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PlanChange, WriteMode } from "@taskplans/client";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startRedisNodes } from "../../test/harness/databases/redis";
import { type Replica, startReplica } from "../../test/harness/servers/replica";
import { type Clients, connect } from "../../test/harness/calls/rpc";
import { memoryMb, processCpuMs } from "../shared/process-stats";

const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
const TASKS = 100;
const RATE = 100; // writes per second in the latency phase
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const THROUGHPUT_WRITES = Number(process.env.BENCH_THROUGHPUT_WRITES ?? 4000);
const IN_FLIGHT = 16;
const CHANNELS = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const append = (client: Clients, taskId: string, i: number) =>
  client.plans.updatePlan({
    taskId,
    content: `- step ${i}: ${"x".repeat(80)}`,
    mode: WriteMode.WRITE_MODE_APPEND,
  });

/** CPU ms per append of each process a round used (by name), summed over the rounds. */
type CpuUse = Map<string, { ms: number; appends: number }>;

/**
 * Appends `count` times over the tasks, `IN_FLIGHT` at once; returns appends per second, and adds
 * the CPU each of `processes` (and this process) spent to `cpu`.
 */
async function throughput(
  client: Clients,
  tasks: readonly string[],
  count: number,
  processes: Record<string, number> = {},
  cpu: CpuUse = new Map(),
): Promise<number> {
  const cpuOf = (): Record<string, number> => ({
    ...Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, processCpuMs(pid)])),
    "bench (writer + watchers)": process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
  });
  const before = cpuOf();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const i = next++;
        await append(client, tasks[i % tasks.length] as string, i);
      }
    }),
  );
  const rate = count / ((performance.now() - started) / 1000);
  const after = cpuOf();
  for (const [name, ms] of Object.entries(after)) {
    const use = cpu.get(name) ?? { ms: 0, appends: 0 };
    cpu.set(name, { ms: use.ms + ms - (before[name] ?? 0), appends: use.appends + count });
  }
  return rate;
}

/**
 * The workload: RATE appends per second for SECONDS; returns the rate achieved and the
 * writer's own latency, and calls `acked` with each acknowledged version's time.
 */
async function paced(
  client: Clients,
  tasks: readonly string[],
  acked: (key: string, at: number) => void = () => undefined,
): Promise<{ achieved: number; p50: number; p99: number; total: number }> {
  const total = RATE * SECONDS;
  const started = performance.now();
  const pending: Promise<unknown>[] = [];
  const took: number[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const taskId = tasks[i % TASKS] as string;
    const sent = performance.now();
    pending.push(
      append(client, taskId, i).then((written) => {
        took.push(performance.now() - sent);
        acked(`${taskId} ${written.plan?.version}`, Date.now());
      }),
    );
  }
  await Promise.all(pending);
  const achieved = total / ((performance.now() - started) / 1000);
  return { achieved, p50: quantile(took, 0.5), p99: quantile(took, 0.99), total };
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-bench-watch-"));
  const mariadb = await startMariaDb({ durable: true });
  const nodes = await startRedisNodes(3);
  const replicas: Replica[] = [];
  const clients: Clients[] = [];
  try {
    await createDatabase(mariadb.port, "bench_watch");
    const env = {
      PLAN_DATABASE_URL: mariadb.urlFor("bench_watch"),
      PLAN_REDIS_URLS: nodes.map((n) => n.url).join(","),
      PLAN_COALESCE_WINDOW_MS: "300000",
    };
    const watched = await startReplica(env, logDir);
    const writing = await startReplica({ ...env, PLAN_MIGRATE_ON_START: "false" }, logDir);
    replicas.push(watched, writing);
    const writer = connect(writing.port);
    clients.push(writer);
    const tasks = Array.from({ length: TASKS }, (_, i) => `bench-watch-${i}`);
    for (const taskId of tasks) {
      await writer.tasks.createTask({ taskId, workspaceId: "ws" });
      await writer.plans.createPlan({ taskId, content: "# Plan" });
    }

    await throughput(writer, tasks, THROUGHPUT_WRITES / 4); // warm-up, not counted
    const without: number[] = [];
    const withThem: number[] = [];
    const processes = {
      "replica A (watched)": watched.pid,
      "replica B (writes)": writing.pid,
      MariaDB: mariadb.pid,
    };
    const cpuWithout: CpuUse = new Map();
    const cpuWith: CpuUse = new Map();
    without.push(await throughput(writer, tasks, THROUGHPUT_WRITES, processes, cpuWithout));

    // Watchers: each records when it received which version (commit time is the change's committed_at).
    const channels = Array.from({ length: CHANNELS }, () => connect(watched.port));
    clients.push(...channels);
    const latencies: number[] = [];
    const receipts: { key: string; at: number }[] = [];
    const acks = new Map<string, number>();
    let measuring = false;
    let received = 0;
    const openWatchers = () =>
      Array.from({ length: WATCHERS }, (_, i) => {
        const taskId = tasks[i % TASKS] as string;
        const stream = (channels[i % CHANNELS] as Clients).plans.watchPlan({ taskId });
        stream.on("data", (change: PlanChange) => {
          received += 1;
          if (!measuring || !change.committedAt) return;
          const now = Date.now();
          latencies.push(now - change.committedAt.getTime());
          receipts.push({ key: `${taskId} ${change.plan?.version}`, at: now });
        });
        stream.on("error", () => undefined);
        return stream;
      });
    const live = async (count: number) => {
      while (received < count) await sleep(20); // every snapshot arrived: all watchers are live
    };
    let streams = openWatchers();
    await live(WATCHERS);

    // The workload: RATE writes per second through the other replica, with the watchers
    // (delivery latency measured) and, next, without them.
    measuring = true;
    const pacedWith = await paced(writer, tasks, (key, at) => acks.set(key, at));
    const { total, achieved } = pacedWith;
    const expected = total * (WATCHERS / TASKS);
    const deadline = Date.now() + 10_000;
    while (latencies.length < expected && Date.now() < deadline) await sleep(20);
    measuring = false;

    for (const stream of streams) stream.cancel();
    await sleep(500);
    const pacedWithout = await paced(writer, tasks);
    const before = received;
    streams = openWatchers();
    await live(before + WATCHERS);

    // Beyond the workload: writers as fast as 16 in flight allow, rounds with and without
    // the watchers; medians are compared.
    withThem.push(await throughput(writer, tasks, THROUGHPUT_WRITES, processes, cpuWith));
    const memory = { watched: memoryMb(watched.pid), writing: memoryMb(writing.pid) };
    // Later rounds alternate the order too (with/without, then without/with), so that a drift of the
    // machine or of the growing tables over the run favours neither side.
    let open = true;
    for (let round = 1; round < ROUNDS; round++) {
      for (const watching of round % 2 === 1 ? [true, false] : [false, true]) {
        if (watching && !open) {
          const before = received;
          streams = openWatchers();
          await live(before + WATCHERS);
        } else if (!watching && open) {
          for (const stream of streams) stream.cancel();
          await sleep(500);
        }
        open = watching;
        const rate = await throughput(
          writer,
          tasks,
          THROUGHPUT_WRITES,
          processes,
          watching ? cpuWith : cpuWithout,
        );
        (watching ? withThem : without).push(rate);
      }
    }
    if (open) for (const stream of streams) stream.cancel();
    const baseline = quantile(without, 0.5);
    const withWatchers = quantile(withThem, 0.5);

    // The writer's acknowledgement comes after the commit: receipt minus acknowledgement (0 when the
    // change arrived first) is a lower bound of commit-to-receipt; committed_at (taken before the
    // transaction's statements) gives the upper bound, which the target is judged on.
    const fromAck = receipts.map((r) => Math.max(0, r.at - (acks.get(r.key) ?? r.at)));
    const p50 = quantile(latencies, 0.5);
    const p99 = quantile(latencies, 0.99);
    const ratio = withWatchers / baseline;
    const maxRss = Math.max(memory.watched.peak, memory.writing.peak);
    const lines = [
      `watch bench: ${WATCHERS} watchers on ${TASKS} tasks (replica A), writes through replica B, MariaDB durable, 3 Redis nodes`,
      `latency phase: ${total} appends at ${RATE}/s (achieved ${achieved.toFixed(1)}/s); ${latencies.length} of ${expected} deliveries`,
      `writer at ${RATE}/s: achieved ${pacedWithout.achieved.toFixed(1)}/s without watchers, ${pacedWith.achieved.toFixed(1)}/s with them: ${(pacedWith.achieved / pacedWithout.achieved).toFixed(2)}x (target >= 0.9x: ${pacedWith.achieved / pacedWithout.achieved >= 0.9 ? "met" : "NOT met"}); its append latency p50/p99 ${pacedWithout.p50.toFixed(1)}/${pacedWithout.p99.toFixed(1)} ms without, ${pacedWith.p50.toFixed(1)}/${pacedWith.p99.toFixed(1)} ms with`,
      `delivery latency, commit to receipt: p50 ${p50} ms, p90 ${quantile(latencies, 0.9)} ms, p99 ${p99} ms, max ${quantile(latencies, 1)} ms (target p99 <= 100 ms: ${p99 <= 100 ? "met" : "NOT met"})`,
      `delivery latency, writer's acknowledgement to receipt (lower bound): p50 ${quantile(fromAck, 0.5)} ms, p99 ${quantile(fromAck, 0.99)} ms, max ${quantile(fromAck, 1)} ms`,
      `saturated writer throughput, ${IN_FLIGHT} in flight, median of ${ROUNDS} rounds each, alternating: ${baseline.toFixed(0)}/s without watchers (${without.map((r) => r.toFixed(0)).join(", ")}), ${withWatchers.toFixed(0)}/s with them (${withThem.map((r) => r.toFixed(0)).join(", ")}): ${ratio.toFixed(2)}x (beyond the issue's workload; no target)`,
      `RSS MB (now / peak): replica A ${memory.watched.rss.toFixed(0)} / ${memory.watched.peak.toFixed(0)}, replica B ${memory.writing.rss.toFixed(0)} / ${memory.writing.peak.toFixed(0)} (target <= 250 MB: ${maxRss <= 250 ? "met" : "NOT met"})`,
    ];
    const perAppend = (use: CpuUse, name: string) => {
      const u = use.get(name);
      return u ? (u.ms / u.appends).toFixed(2) : "-";
    };
    for (const name of cpuWith.keys())
      lines.push(
        `CPU ms per append, ${name}: ${perAppend(cpuWithout, name)} without watchers, ${perAppend(cpuWith, name)} with them`,
      );
    console.log(lines.join("\n"));
    if (latencies.length < expected)
      console.log(`WARNING: ${expected - latencies.length} deliveries missing`);
  } finally {
    for (const client of clients) client.close();
    for (const replica of replicas) await replica.stop();
    for (const node of nodes) await node.stop();
    await mariadb.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
