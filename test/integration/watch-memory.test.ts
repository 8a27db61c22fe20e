import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WriteMode } from "@taskplans/contract";
import { type Replica, startReplica } from "../harness/servers/replica";
import { type Clients, connect } from "../harness/calls/rpc";
import { openStalledWatches } from "../harness/calls/stalled-watches";
import { randomId } from "../harness/servers/test-app";

// Never-reading WatchPlan clients against a replica process (dist/src/main.js), measured from outside:
// its RSS (/proc) and its /metrics. The attack of issue 40: one HTTP/2 connection, many content
// streams resuming from version 0 of a task holding a 250 KB plan and 300 appends, never read.
const STREAMS = 32;
const MiB = 1024 * 1024;
// The bound the docs state for this shape (docs: "WatchPlan memory"): per stream, the message being
// written and the catch-up's page (4 plans of at most 256 KiB); the queues are empty, since a
// catch-up waits for its client. 32 x 1.5 MiB = 48 MiB; 96 MiB leaves room for the allocator.
const RSS_GROWTH_BOUND = 96 * MiB;

let dir: string;
let replica: Replica;
let client: Clients;

const rss = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;

async function gauge(name: string, labels = ""): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  if (!line) throw new Error(`${name}${labels} is not in /metrics`);
  return Number(line.split(" ")[1]);
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "watch-memory-"));
  replica = await startReplica({ PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}` }, dir, null, {
    metrics: true,
  });
  client = connect(replica.port);
}, 60_000);

afterAll(async () => {
  client?.close();
  await replica?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("WatchPlan memory with clients that never read", () => {
  it(`${STREAMS} never-reading content streams keep the replica within its stated bound, and free it when they go`, async () => {
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
      // Long enough for today's code to have queued hundreds of plans per stream.
      await settle(5_000);
      const grown = rss(replica.pid) - before;
      const [streams, queued, writing] = [
        await gauge("taskplans_watch_streams"),
        await gauge("taskplans_watch_buffer_bytes", '{state="queued"}'),
        await gauge("taskplans_watch_buffer_bytes", '{state="writing"}'),
      ];
      console.log(
        `${STREAMS} never-reading content streams: RSS ${(before / MiB).toFixed(0)} -> ${((before + grown) / MiB).toFixed(0)} MiB (+${(grown / MiB).toFixed(1)} MiB); queued ${queued} B, being written ${(writing / MiB).toFixed(2)} MiB`,
      );
      expect(stalled.started()).toBe(STREAMS);
      expect(streams).toBe(STREAMS);
      expect(queued).toBe(0); // a catch-up waits for its client: nothing queues behind the message being written
      expect(writing).toBeLessThanOrEqual(STREAMS * 300_000); // one plan per stream
      expect(grown).toBeLessThan(RSS_GROWTH_BOUND);
      // Other callers are served meanwhile.
      expect((await client.plans.getPlan({ taskId, limit: 10 })).plan?.version).toBe(301);
    } finally {
      await stalled.close();
    }
    for (let i = 0; i < 50 && (await gauge("taskplans_watch_streams")) > 0; i++) await settle(100);
    expect(await gauge("taskplans_watch_streams")).toBe(0);
    expect(await gauge("taskplans_watch_buffer_bytes", '{state="writing"}')).toBe(0);
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
