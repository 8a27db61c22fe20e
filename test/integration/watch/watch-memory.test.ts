import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { statusDetailsOf } from "@taskplans/client";
import { WriteMode } from "@taskplans/contract";
import type { ServiceError } from "@grpc/grpc-js";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { type Clients, connect } from "../../harness/calls/rpc";
import { openStalledWatches, type StalledWatches } from "../../harness/calls/stalled-watches";
import { openStalledHttpWatches } from "../../harness/calls/stalled-http-watches";
import { Watcher } from "../../harness/calls/watcher";
import { randomId } from "../../harness/servers/test-app";

// Never-reading WatchPlan clients against a replica process (dist/src/bin/main.js), measured from outside:
// its RSS (/proc) and its /metrics. WATCH_MEMORY_MAIN names another build's main.js to compare
// (the figures of docs/watch.md "WatchPlan memory" were measured that way, before and after).
const MAIN = process.env.WATCH_MEMORY_MAIN || undefined;
const MiB = 1024 * 1024;
// The bound docs/watch.md states for these shapes: PLAN_WATCH_BUFFER_BYTES (64 MiB by default) of
// messages for all streams together, plus what each open stream costs besides its messages (its
// socket or HTTP/2 stream, its call: tens of KiB), plus the allocator's slack.
const REPLICA_BOUND = 256 * MiB;
// The largest plan whose JSON is the longest: every character a control character, which Connect
// JSON writes as a 6-byte escape (\u0001), so a 256 KiB plan is a 1.5 MiB message.
const PLAN_LIMIT = 262_144;
/**
 * How many tasks the hundreds of streams below resume on, each with VERSIONS versions (more than
 * the sockets' buffers absorb, so each stream stalls on a message of its own task).
 */
const PLANS = 64;
const VERSIONS = 5;
const worstPlan = (n: number) => {
  const head = `# Plan ${n}\n`;
  return head + "\u0001".repeat(PLAN_LIMIT - head.length);
};

const rss = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;

async function metric(replica: Replica, name: string, labels = ""): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(" ")[1]) : 0;
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function started(env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "watch-memory-"));
  const replica = await startReplica(
    { PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}`, ...env },
    dir,
    null,
    { metrics: true, ...(MAIN ? { main: MAIN } : {}) },
  );
  const client = connect(replica.port);
  return {
    replica,
    client,
    stop: async () => {
      client.close();
      await replica.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// GetPlan on each of `clients`, timed: the median of a few calls each, their calls interleaved (so
// that two replicas are read at the same moments of the machine).
async function getPlanMsOn(clients: readonly Clients[], taskId: string): Promise<number[]> {
  const times = clients.map((): number[] => []);
  for (let i = 0; i < 7; i++)
    for (const [n, client] of clients.entries()) {
      const start = process.hrtime.bigint();
      await client.plans.getPlan({ taskId });
      times[n]?.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  return times.map(median);
}

// A bystander's GetPlan, timed on one replica.
const getPlanMs = async (client: Clients, taskId: string) =>
  (await getPlanMsOn([client], taskId))[0] as number;

describe("WatchPlan memory with clients that never read", () => {
  let replica: Replica;
  let client: Clients;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ replica, client, stop } = await started());
  }, 60_000);
  afterAll(async () => stop?.());

  it("32 never-reading content streams resuming from version 0 on one connection keep the replica within its bound, and free it when they go", async () => {
    const STREAMS = 32;
    const taskId = randomId("task");
    await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "a task" });
    await client.plans.createPlan({ taskId, content: `# Plan\n${"x".repeat(250_000)}\n` });
    for (let i = 0; i < 300; i++)
      await client.plans.updatePlan({ taskId, content: `- step ${i}`, mode: WriteMode.WRITE_MODE_APPEND });
    await settle(1_000);
    const before = rss(replica.pid);

    const stalled = await openStalledWatches(replica.port, STREAMS, {
      taskId,
      afterVersion: 0,
      includeContent: true,
    });
    try {
      // Long enough for the code of issue 40 to have queued hundreds of plans per stream.
      await settle(5_000);
      const grown = rss(replica.pid) - before;
      const [streams, queued, writing] = [
        await metric(replica, "taskplans_watch_streams"),
        await metric(replica, "taskplans_watch_buffer_bytes", '{state="queued"}'),
        await metric(replica, "taskplans_watch_buffer_bytes", '{state="writing"}'),
      ];
      console.log(
        `${STREAMS} never-reading content streams: RSS ${(before / MiB).toFixed(0)} -> ${((before + grown) / MiB).toFixed(0)} MiB (+${(grown / MiB).toFixed(1)} MiB); queued ${queued} B, being written ${(writing / MiB).toFixed(2)} MiB`,
      );
      expect(stalled.started()).toBe(STREAMS);
      expect(streams).toBe(STREAMS); // 32 x 0.5 MiB fit the budget: nobody needs to be evicted
      expect(queued).toBe(0); // a catch-up waits for its client: nothing queues behind the message being written
      expect(writing).toBeLessThanOrEqual(STREAMS * 2 * 260_000); // one plan per stream, and gRPC's framed copy
      expect(grown).toBeLessThan(96 * MiB);
      // Other callers are served meanwhile.
      expect((await client.plans.getPlan({ taskId, limit: 10 })).plan?.version).toBe(301);
    } finally {
      await stalled.close();
    }
    for (let i = 0; i < 50 && (await metric(replica, "taskplans_watch_streams")) > 0; i++) await settle(100);
    expect(await metric(replica, "taskplans_watch_streams")).toBe(0);
    expect(await metric(replica, "taskplans_watch_buffer_bytes", '{state="writing"}')).toBe(0);
    expect(await metric(replica, "taskplans_watch_buffer_bytes", '{state="reading"}')).toBe(0);
  }, 180_000);

  it("a connection may hold PLAN_GRPC_MAX_CONCURRENT_STREAMS streams (100 by default), announced in its HTTP/2 settings", async () => {
    const stalled = await openStalledWatches(replica.port, 0, { taskId: "t", includeContent: false });
    try {
      expect(stalled.maxConcurrentStreams).toBe(100);
    } finally {
      await stalled.close();
    }
  });
});

// Issue 54: the bound above is per stream and per connection; over HTTP/1.1 every stream is its own
// connection, and gRPC clients open as many connections as they like. The replica's budget
// (PLAN_WATCH_BUFFER_BYTES, every door's streams together) and its stream cap bound the replica.
describe.each([
  { door: "HTTP/1.1 (Connect JSON, one connection each)", streams: 256, connections: 256 },
  { door: "gRPC (8 HTTP/2 connections)", streams: 512, connections: 8 },
])("hundreds of never-reading content streams over $door", ({ door, streams, connections }) => {
  let replica: Replica;
  let client: Clients;
  let stop: () => Promise<void>;
  // An idle replica on the same machine, read at the same moments: what the machine's own load (the
  // other suites of a full run) costs a GetPlan then, which the bystander's bound allows for.
  let control: Awaited<ReturnType<typeof started>>;

  beforeAll(async () => {
    ({ replica, client, stop } = await started());
    control = await started();
  }, 60_000);
  afterAll(async () => {
    await stop?.();
    await control?.stop();
  });

  it(`${streams} streams of the worst JSON plan keep the replica under its stated bound, and a bystander's GetPlan is answered`, async () => {
    // Streams of one plan share its bytes and its JSON form (encode-change.ts sharedBytes): spread
    // over PLANS tasks, their JSON forms are more than the budget holds, so it must evict.
    const taskIds = Array.from({ length: PLANS }, () => randomId("task"));
    for (const [t, taskId] of taskIds.entries()) {
      await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "a task" });
      await client.plans.createPlan({ taskId, content: worstPlan(t * VERSIONS) });
      for (let n = 1; n < VERSIONS; n++)
        await client.plans.updatePlan({
          taskId,
          content: worstPlan(t * VERSIONS + n),
          mode: WriteMode.WRITE_MODE_REPLACE,
          expectedVersion: n,
        });
    }
    const taskId = taskIds[0] as string;
    const bystander = randomId("task");
    await client.tasks.createTask({ taskId: bystander, workspaceId: "ws-1", title: "another task" });
    await client.plans.createPlan({ taskId: bystander, content: "# Another plan\n" });
    await control.client.tasks.createTask({ taskId: bystander, workspaceId: "ws-1", title: "another task" });
    await control.client.plans.createPlan({ taskId: bystander, content: "# Another plan\n" });
    await settle(1_000);
    const quietMs = await getPlanMs(client, bystander);
    const before = rss(replica.pid);

    const request = (i: number) => ({
      taskId: taskIds[i % PLANS] as string,
      afterVersion: 0,
      includeContent: true,
    });
    const http: { close(): Promise<void> }[] = [];
    const grpc: StalledWatches[] = [];
    try {
      if (connections === streams)
        for (let i = 0; i < PLANS; i++)
          http.push(await openStalledHttpWatches(replica.httpPort, streams / PLANS, request(i)));
      else
        for (let c = 0; c < connections; c++)
          grpc.push(await openStalledWatches(replica.port, streams / connections, request(c)));
      // Long enough for every stream to have been served and stalled (the old code's RSS grew all along).
      // And a task goes on changing: its streams are offered the live changes too.
      await settle(2_000);
      for (let n = VERSIONS; n < VERSIONS + 3; n++)
        await client.plans.updatePlan({
          taskId,
          content: worstPlan(PLANS * VERSIONS + n),
          mode: WriteMode.WRITE_MODE_REPLACE,
          expectedVersion: n,
        });
      await settle(4_000);
      const grown = rss(replica.pid) - before;
      const [duringMs = 0, controlMs = 0] = await getPlanMsOn([client, control.client], bystander);
      const [heap, external] = [
        await metric(replica, "nodejs_heap_size_used_bytes"),
        await metric(replica, "nodejs_external_memory_bytes"),
      ];
      const [open, writing, cut] = [
        await metric(replica, "taskplans_watch_streams"),
        await metric(replica, "taskplans_watch_buffer_bytes", '{state="writing"}'),
        await metric(replica, "taskplans_rejections_total", '{reason="WATCH_TOO_SLOW"}'),
      ];
      console.log(
        `${streams} never-reading streams over ${door}: RSS ${(before / MiB).toFixed(0)} -> ${((before + grown) / MiB).toFixed(0)} MiB (+${(grown / MiB).toFixed(1)} MiB; V8 heap ${(heap / MiB).toFixed(0)} MiB, external ${(external / MiB).toFixed(0)} MiB); ${open} streams open, ${(writing / MiB).toFixed(1)} MiB being written, ${cut} cut WATCH_TOO_SLOW; bystander GetPlan ${quietMs.toFixed(1)} ms quiet, ${duringMs.toFixed(1)} ms meanwhile (${controlMs.toFixed(1)} ms on an idle replica then)`,
      );
      expect(grown).toBeLessThan(REPLICA_BOUND);
      expect(writing).toBeLessThanOrEqual(64 * MiB);
      expect(cut).toBeGreaterThan(0); // the budget was full: it evicted
      expect(duringMs).toBeLessThan(Math.max(20 * Math.max(quietMs, controlMs), 50));
      expect((await client.plans.getPlan({ taskId: bystander })).plan?.content).toBe("# Another plan\n");
    } finally {
      for (const stalled of [...http, ...grpc]) await stalled.close();
    }
  }, 180_000);
});

describe("the replica's WatchPlan stream cap (PLAN_WATCH_MAX_STREAMS)", () => {
  let replica: Replica;
  let client: Clients;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ replica, client, stop } = await started({ PLAN_WATCH_MAX_STREAMS: "3" }));
  }, 60_000);
  afterAll(async () => stop?.());

  it("one stream past the cap, on either door, is refused RESOURCE_EXHAUSTED WATCH_STREAMS_EXHAUSTED with RetryInfo; a place freed is taken again", async () => {
    const taskId = randomId("task");
    await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "a task" });
    await client.plans.createPlan({ taskId, content: "# Plan\n" });
    const held = [0, 1, 2].map(() => new Watcher(client.plans.watchPlan({ taskId })));
    for (const watcher of held) await watcher.received(1); // each has its snapshot
    const refused = client.plans.watchPlan({ taskId });
    const error = await new Promise<ServiceError>((resolve) => refused.on("error", resolve));
    const details = statusDetailsOf(error);
    const delay = details?.retryInfo?.retryDelay;
    expect([error.code, details?.errorInfo?.reason, details?.errorInfo?.metadata?.max_streams]).toEqual([
      8,
      "WATCH_STREAMS_EXHAUSTED",
      "3",
    ]);
    expect((delay?.seconds ?? 0) * 1000 + (delay?.nanos ?? 0) / 1e6).toBe(1_000);

    // The HTTP door counts against the same cap.
    const connect = await fetch(`http://127.0.0.1:${replica.httpPort}/taskplans.v1.PlanService/WatchPlan`, {
      method: "POST",
      headers: { "content-type": "application/connect+json" },
      body: envelope({ taskId }),
    });
    const body = Buffer.from(await connect.arrayBuffer());
    expect(body.subarray(5).toString()).toContain('"code":"resource_exhausted"');
    expect(body.subarray(5).toString()).toContain("WATCH_STREAMS_EXHAUSTED");

    held[0]?.cancel();
    await held[0]?.ended();
    await settle(200);
    const again = new Watcher(client.plans.watchPlan({ taskId }));
    expect((await again.received(1))[0]?.kind).toBe(1); // its snapshot
    again.cancel();
    for (const watcher of held.slice(1)) watcher.cancel();
    expect(await metric(replica, "taskplans_rejections_total", '{reason="WATCH_STREAMS_EXHAUSTED"}')).toBe(2);
  }, 60_000);
});

function envelope(message: object): Buffer {
  const json = Buffer.from(JSON.stringify(message));
  const framed = Buffer.alloc(5 + json.length);
  framed.writeUInt32BE(json.length, 1);
  json.copy(framed, 5);
  return framed;
}
