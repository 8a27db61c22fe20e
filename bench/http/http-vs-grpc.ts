/**
 * Benchmark (not a test): the HTTP door's cost against the gRPC port's, same replica, same run, same
 * load. MariaDB with durable commits, one replica process (in-process lock). Rounds alternate the
 * protocols; medians are compared:
 * - CPU of the replica process per 100-byte append and per GetPlan (16 in flight, 1,000 tasks), the
 *   client package over gRPC against Connect JSON over HTTP/1.1 (`@connectrpc/connect-node`, the
 *   transport switch of the test harness; neither asks for compressed answers); target <= 1.3x;
 * - WatchPlan delivery latency, commit to receipt, with 1,000 watchers (10 per task, 100 tasks) at 100
 *   writes/s: gRPC streams (20 connections) against Connect server streams (JSON, one HTTP/1.1
 *   connection each), read by connect-node's client and, to tell the service from that client (all
 *   1,000 streams share this process and the machine's cores with the replica and the writer), by
 *   node:http with a few lines of envelope parsing; target p99 <= 1.5x. BENCH_WATCH_ROUNDS rounds
 *   (default 4), each kind first in turn.
 *
 *   npm run bench:http
 *   BENCH_ROUNDS=5 BENCH_CALLS=3000 BENCH_WATCHERS=1000 npm run bench:http
 *   BENCH_PARTS=watch npm run bench:http   # the WatchPlan half only
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromJsonString } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { es, type PlanChange, WriteMode } from "@taskplans/contract";
import { createClient as createGrpcClient } from "@taskplans/client";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { type Replica, startReplica } from "../../test/harness/servers/replica";
import { type Clients, connect } from "../../test/harness/calls/rpc";
import { connectOverHttp } from "../../test/harness/calls/connect-clients";
import { processCpuMs } from "../shared/process-stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5); // 3 let one noisy round move the median ratio by 0.2
const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
const TASKS = 1000;
const WATCHED_TASKS = 100;
const IN_FLIGHT = 16;
const RATE = 100;
const WATCH_SECONDS = Number(process.env.BENCH_WATCH_SECONDS ?? 10);
const WATCH_ROUNDS = Number(process.env.BENCH_WATCH_ROUNDS ?? 4);
// BENCH_PARTS=cpu or BENCH_PARTS=watch runs one half (default both).
const PARTS = (process.env.BENCH_PARTS ?? "cpu,watch").split(",");

type Protocol = "gRPC" | "Connect JSON";
/** Who reads the watch streams: the gRPC client package, connect-node's client, or node:http. */
type Watcher = "gRPC" | "Connect JSON" | "Connect JSON (node:http client)";
const WATCHERS_KINDS: readonly Watcher[] = ["gRPC", "Connect JSON", "Connect JSON (node:http client)"];

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const median = (values: readonly number[]) => quantile(values, 0.5);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function withPool(count: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** The replica's CPU ms per call of `work`, `count` calls 16 in flight. */
async function cpuPerCall(replica: Replica, count: number, work: (i: number) => Promise<unknown>) {
  const before = processCpuMs(replica.pid);
  await withPool(count, work);
  return (processCpuMs(replica.pid) - before) / count;
}

const appendTo = (client: Clients, tasks: readonly string[]) => (i: number) =>
  client.plans.updatePlan({
    taskId: tasks[i % tasks.length] as string,
    content: `- step ${i}: ${"x".repeat(80)}`,
    mode: WriteMode.WRITE_MODE_APPEND,
  });
const readFrom = (client: Clients, tasks: readonly string[]) => (i: number) =>
  client.plans.getPlan({ taskId: tasks[i % tasks.length] as string });

/** Delivery latency (ms, commit to receipt) of `WATCHERS` streams of one protocol at RATE writes/s. */
async function deliveries(replica: Replica, protocol: Watcher, writer: Clients, tasks: readonly string[]) {
  const latencies: number[] = [];
  let received = 0;
  let measuring = false;
  const record = (committedAtMs: number | null) => {
    received += 1;
    if (measuring && committedAtMs !== null) latencies.push(Date.now() - committedAtMs);
  };
  const stops: (() => void)[] = [];
  if (protocol === "gRPC") {
    // 20 connections of 50 streams each (a subchannel pool of their own: grpc-js would otherwise
    // share one connection among them), under PLAN_GRPC_MAX_CONCURRENT_STREAMS (100).
    const channels = Array.from({ length: 20 }, () =>
      createGrpcClient(`127.0.0.1:${replica.port}`, {
        defaultTimeoutMs: 0,
        retry: false,
        channelOptions: { "grpc.use_local_subchannel_pool": 1 },
      }),
    );
    for (let i = 0; i < WATCHERS; i++) {
      const stream = (channels[i % channels.length] as Clients).plans.watchPlan({
        taskId: tasks[i % WATCHED_TASKS] as string,
      });
      stream.on("data", (change: PlanChange) => record(change.committedAt?.getTime() ?? null));
      stream.on("error", () => undefined);
      stops.push(() => stream.cancel());
    }
    stops.push(() => channels.forEach((c) => c.close()));
  } else if (protocol === "Connect JSON (node:http client)") {
    // Connect streaming read with node:http, a few lines of envelope parsing and protobuf-es decoding:
    // the service's delivery without connect-node's client pipeline (which shares the cores with the
    // replica here).
    for (let i = 0; i < WATCHERS; i++) {
      const body = Buffer.from(JSON.stringify({ taskId: tasks[i % WATCHED_TASKS] }));
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(body.length, 1);
      const req = request(
        {
          host: "127.0.0.1",
          port: replica.httpPort,
          method: "POST",
          path: "/taskplans.v1.PlanService/WatchPlan",
          headers: { "content-type": "application/connect+json" },
          agent: false,
        },
        (res) => {
          let pending: Buffer = Buffer.alloc(0);
          res.on("data", (chunk: Buffer) => {
            pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
            while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
              const length = pending.readUInt32BE(1);
              if (pending.readUInt8(0) === 0) {
                // Decoded into the message as any client must (as the gRPC client decodes its own).
                const change = fromJsonString(
                  es.PlanChangeSchema,
                  pending.subarray(5, 5 + length).toString(),
                );
                const at = change.committedAt;
                record(at ? Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6) : null);
              }
              pending = pending.subarray(5 + length);
            }
          });
          res.on("error", () => undefined);
        },
      );
      req.on("error", () => undefined);
      req.end(Buffer.concat([prefix, body]));
      stops.push(() => req.destroy());
    }
  } else {
    const transport = createConnectTransport({
      baseUrl: `http://127.0.0.1:${replica.httpPort}`,
      httpVersion: "1.1",
      useBinaryFormat: false,
      acceptCompression: [], // as the gRPC client: no compressed answers
    });
    const client = createClient(es.PlanService, transport);
    for (let i = 0; i < WATCHERS; i++) {
      const abort = new AbortController();
      void (async () => {
        try {
          const stream = client.watchPlan(
            { taskId: tasks[i % WATCHED_TASKS] as string },
            { signal: abort.signal },
          );
          for await (const change of stream) {
            const at = change.committedAt;
            record(at ? Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6) : null);
          }
        } catch {
          // cancelled
        }
      })();
      stops.push(() => abort.abort());
    }
  }
  const opening = Date.now() + 60_000;
  while (received < WATCHERS) {
    if (Date.now() > opening)
      throw new Error(`${protocol}: only ${received} of ${WATCHERS} streams opened in 60 s`);
    await sleep(20); // every snapshot arrived: all streams are live
  }
  measuring = true;
  const writes = RATE * WATCH_SECONDS;
  const started = Date.now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < writes; i++) {
    const due = started + (i * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    pending.push(appendTo(writer, tasks.slice(0, WATCHED_TASKS))(i));
  }
  await Promise.all(pending);
  const expected = writes * (WATCHERS / WATCHED_TASKS);
  const deadline = Date.now() + 10_000;
  while (latencies.length < expected && Date.now() < deadline) await sleep(20);
  measuring = false;
  for (const stop of stops) stop();
  // The streams' teardown (and its garbage) settles before the next run is measured.
  await sleep(3000);
  return { latencies, expected };
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-bench-http-"));
  const mariadb = await startMariaDb({ durable: true });
  let replica: Replica | null = null;
  const clients: Clients[] = [];
  try {
    await createDatabase(mariadb.port, "bench_http");
    replica = await startReplica(
      { PLAN_DATABASE_URL: mariadb.urlFor("bench_http"), PLAN_COALESCE_WINDOW_MS: "300000" },
      logDir,
    );
    const grpc = connect(replica.port);
    const http = connectOverHttp(replica.httpPort);
    clients.push(grpc, http);
    const byProtocol: Record<Protocol, Clients> = { gRPC: grpc, "Connect JSON": http };
    const tasks = Array.from({ length: TASKS }, (_, i) => `bench-http-${i}`);
    await withPool(TASKS, async (i) => {
      await grpc.tasks.createTask({ taskId: tasks[i] as string, workspaceId: "ws" });
      await grpc.plans.createPlan({ taskId: tasks[i] as string, content: "# Plan" });
    });
    // Warm-up of both doors (the JIT sees each path), not counted.
    for (const client of [grpc, http]) {
      await withPool(CALLS / 4, appendTo(client, tasks));
      await withPool(CALLS / 4, readFrom(client, tasks));
    }

    const cpu: Record<Protocol, { append: number[]; read: number[] }> = {
      gRPC: { append: [], read: [] },
      "Connect JSON": { append: [], read: [] },
    };
    for (let round = 0; round < (PARTS.includes("cpu") ? ROUNDS : 0); round++) {
      const order: Protocol[] = round % 2 === 0 ? ["gRPC", "Connect JSON"] : ["Connect JSON", "gRPC"];
      for (const protocol of order) {
        const client = byProtocol[protocol];
        cpu[protocol].append.push(await cpuPerCall(replica, CALLS, appendTo(client, tasks)));
        cpu[protocol].read.push(await cpuPerCall(replica, CALLS, readFrom(client, tasks)));
        console.error(
          `round ${round + 1} ${protocol}: CPU ms per append ${cpu[protocol].append.at(-1)?.toFixed(3)}, per GetPlan ${cpu[protocol].read.at(-1)?.toFixed(3)}`,
        );
      }
    }
    const watch = new Map<Watcher, number[]>(WATCHERS_KINDS.map((kind) => [kind, []]));
    const p99s = new Map<Watcher, number[]>(WATCHERS_KINDS.map((kind) => [kind, []]));
    for (let round = 0; round < (PARTS.includes("watch") ? WATCH_ROUNDS : 0); round++) {
      // Each round starts with the next kind, so none always runs first.
      const order = WATCHERS_KINDS.map(
        (_, i) => WATCHERS_KINDS[(i + round) % WATCHERS_KINDS.length] as Watcher,
      );
      for (const protocol of order) {
        const cpuBefore = processCpuMs(replica.pid);
        const { latencies, expected } = await deliveries(replica, protocol, grpc, tasks);
        const cpuMs = processCpuMs(replica.pid) - cpuBefore;
        if (latencies.length < expected)
          console.log(`  ${protocol}: ${latencies.length} of ${expected} deliveries arrived within 10 s`);
        watch.get(protocol)?.push(...latencies);
        console.error(
          `watch round ${round + 1} ${protocol}: p99 ${quantile(latencies, 0.99)} ms over ${latencies.length} deliveries; the replica's CPU ${cpuMs} ms (streams opened and closed included)`,
        );
        p99s.get(protocol)?.push(quantile(latencies, 0.99));
      }
    }

    const ratio = (a: number, b: number) => (b > 0 ? a / b : NaN);
    const appendRatio = ratio(median(cpu["Connect JSON"].append), median(cpu.gRPC.append));
    const readRatio = ratio(median(cpu["Connect JSON"].read), median(cpu.gRPC.read));
    const p99 = (kind: Watcher) => quantile(watch.get(kind) ?? [], 0.99);
    const watchLine = (kind: Watcher) => {
      const r = ratio(p99(kind), p99("gRPC"));
      return `  ${kind}: p50 ${quantile(watch.get(kind) ?? [], 0.5)} ms p99 ${p99(kind)} ms (rounds ${p99s.get(kind)?.join("/")})${kind === "gRPC" ? "" : `: ${r.toFixed(2)}x (target <= 1.5x: ${r <= 1.5 ? "met" : "NOT met"})`}`;
    };
    const lines = [
      `HTTP door vs gRPC port, one replica on MariaDB (durable), ${TASKS} tasks, ${IN_FLIGHT} in flight, ${ROUNDS} alternating rounds of ${CALLS} calls (medians; the replica's CPU from /proc)`,
      `CPU per append: gRPC ${median(cpu.gRPC.append).toFixed(3)} ms, Connect JSON ${median(cpu["Connect JSON"].append).toFixed(3)} ms: ${appendRatio.toFixed(2)}x (target <= 1.3x: ${appendRatio <= 1.3 ? "met" : "NOT met"}); rounds ${cpu.gRPC.append.map((v) => v.toFixed(3)).join("/")} vs ${cpu["Connect JSON"].append.map((v) => v.toFixed(3)).join("/")}`,
      `CPU per GetPlan: gRPC ${median(cpu.gRPC.read).toFixed(3)} ms, Connect JSON ${median(cpu["Connect JSON"].read).toFixed(3)} ms: ${readRatio.toFixed(2)}x (target <= 1.3x: ${readRatio <= 1.3 ? "met" : "NOT met"}); rounds ${cpu.gRPC.read.map((v) => v.toFixed(3)).join("/")} vs ${cpu["Connect JSON"].read.map((v) => v.toFixed(3)).join("/")}`,
      [
        `WatchPlan delivery, commit to receipt, ${WATCHERS} watchers at ${RATE} writes/s for ${WATCH_SECONDS} s, ${WATCH_ROUNDS} rounds each (p99 of all rounds' deliveries):`,
        ...WATCHERS_KINDS.map(watchLine),
      ].join("\n"),
    ];
    const ran = [
      lines[0],
      ...(PARTS.includes("cpu") ? [lines[1], lines[2]] : []),
      ...(PARTS.includes("watch") ? [lines[3]] : []),
    ];
    console.log(ran.join("\n"));
  } finally {
    for (const client of clients) client.close();
    await replica?.stop();
    await mariadb.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
