import Redis from "ioredis";
import { WriteMode } from "@taskplans/contract";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";
import { Watcher } from "../../harness/calls/watcher";

const APPEND = WriteMode.WRITE_MODE_APPEND;

describe("WatchPlan across two replicas (MariaDB + 3 Redis nodes)", () => {
  let nodes: RedisNode[];
  let replicas: TestApp[];

  beforeAll(async () => {
    nodes = await startRedisNodes(3);
    // Polling is slowed down so that delivery across replicas rests on the Redis notifications.
    const env = {
      PLAN_REDIS_URLS: nodes.map((n) => n.url).join(","),
      PLAN_COALESCE_WINDOW_MS: "0",
      PLAN_LOCK_WAIT_MS: "5000",
      PLAN_WATCH_POLL_INTERVAL_MS: "600000",
    };
    const first = await startTestApp("mysql", { env });
    replicas = [
      first,
      await startTestApp("mysql", { env: { ...env, PLAN_DATABASE_URL: first.databaseUrl } }),
    ];
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    for (const node of nodes) await node.stop();
  });

  it("a watcher resuming on alternate replicas during concurrent writes through both gets every version exactly once, in order", async () => {
    const [a, b] = replicas as [TestApp, TestApp];
    const taskId = await a.newTask();
    await a.plans.createPlan({ taskId, content: "# Plan" });
    const perWriter = 40;
    const target = 1 + 2 * perWriter;
    const acknowledged: number[] = [1];
    const writer = async (replica: TestApp, name: string) => {
      for (let i = 0; i < perWriter; i++) {
        const written = await replica.plans.updatePlan({ taskId, content: `- ${name} ${i}`, mode: APPEND });
        acknowledged.push(written.plan?.version ?? -1);
      }
    };
    const writing = Promise.all([writer(a, "a"), writer(b, "b")]);
    const received: number[] = [];
    let last = 0;
    let sessions = 0;
    while (last < target) {
      // Each session takes a few changes, then the watcher drops it and resumes on the other replica.
      const replica = replicas[sessions % 2] as TestApp;
      sessions += 1;
      const watcher = new Watcher(replica.plans.watchPlan({ taskId, afterVersion: last }));
      const got = await watcher.received(Math.min(3, target - last));
      watcher.cancel();
      for (const change of got) received.push(change.plan?.version ?? -1);
      last = received[received.length - 1] ?? last;
    }
    await writing;
    expect(sessions).toBeGreaterThan(20);
    const all = Array.from({ length: target }, (_, i) => i + 1);
    expect(received).toEqual(all);
    expect([...acknowledged].sort((x, y) => x - y)).toEqual(all);
    const revisions = (await a.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions;
    expect(revisions.map((r) => r.revisionNumber).reverse()).toEqual(all);
    // The history the stream replays equals the history the revisions hold.
    const replay = new Watcher(b.plans.watchPlan({ taskId, afterVersion: 0, includeContent: true }));
    const changes = await replay.received(target);
    replay.cancel();
    for (const change of changes.slice(-5)) {
      const revision = (await a.plans.getPlanRevision({ taskId, revisionId: change.revision?.id })).revision;
      expect([change.revision?.number, change.plan?.content]).toEqual([
        revision?.revisionNumber,
        revision?.content,
      ]);
    }
  });

  it("live watchers on both replicas see a write made through either one", async () => {
    const [a, b] = replicas as [TestApp, TestApp];
    const taskId = await a.newTask();
    const watchers = [a, b].map((r) => new Watcher(r.plans.watchPlan({ taskId })));
    for (const w of watchers) await w.received(1);
    await a.plans.createPlan({ taskId, content: "from a" });
    await b.plans.updatePlan({ taskId, content: "from b", mode: APPEND });
    for (const w of watchers) {
      await w.received(3);
      expect(w.versions()).toEqual([1, 2]);
      w.cancel();
    }
  });

  it("a replica whose notifications are lost still delivers every change, by polling the change history", async () => {
    const [a] = replicas as [TestApp, TestApp];
    // Its notification Redis is down from the start: nothing reaches it, nothing leaves it.
    const [deaf] = await startRedisNodes(1);
    const url = deaf?.url ?? "";
    await deaf?.stop();
    const lonely = await startTestApp("mysql", {
      env: {
        PLAN_DATABASE_URL: a.databaseUrl,
        PLAN_REDIS_URLS: nodes.map((n) => n.url).join(","),
        PLAN_CHANGES_REDIS_URL: url,
        PLAN_WATCH_POLL_INTERVAL_MS: "200",
      },
    });
    try {
      const taskId = await a.newTask();
      const watcher = new Watcher(lonely.plans.watchPlan({ taskId }));
      await watcher.received(1);
      await a.plans.createPlan({ taskId, content: "one" });
      await a.plans.updatePlan({ taskId, content: "two", mode: APPEND });
      await watcher.received(3);
      expect(watcher.versions()).toEqual([1, 2]);
      watcher.cancel();
    } finally {
      await lonely.stop();
    }
  });

  it("a write sends nothing to Redis until another replica watches its task, then every write is announced", async () => {
    const [a, b] = replicas as [TestApp, TestApp];
    // What the replicas publish on the change channel, heard on every node.
    const heard: string[] = [];
    const listeners = nodes.map((node) => new Redis(node.url));
    for (const listener of listeners) {
      listener.on("message", (_channel: string, message: string) => heard.push(message));
      await listener.subscribe("taskplans:changes");
    }
    const changesOf = (taskId: string) => heard.filter((message) => message.startsWith(`${taskId}\t`));
    try {
      const taskId = await a.newTask();
      await a.plans.createPlan({ taskId, content: "# Plan" });
      await a.plans.updatePlan({ taskId, content: "- unwatched", mode: APPEND });
      // A watcher on the writer's own replica hears it without Redis.
      const local = new Watcher(a.plans.watchPlan({ taskId }));
      await local.received(1);
      await a.plans.updatePlan({ taskId, content: "- watched on a", mode: APPEND });
      await local.received(2);
      expect(changesOf(taskId)).toEqual([]);
      const remote = new Watcher(b.plans.watchPlan({ taskId }));
      await remote.received(1);
      // b said so on the channel; a's next writes go out, and reach b's watcher.
      await waitFor(() =>
        heard.some((message) => message.startsWith("\twatching\t") && message.includes(taskId)),
      );
      await a.plans.updatePlan({ taskId, content: "- watched on b", mode: APPEND });
      await remote.received(2);
      expect(remote.versions()).toEqual([4]);
      await waitFor(() => changesOf(taskId).length === 1);
      expect(changesOf(taskId)[0]).toMatch(new RegExp(`^${taskId}\t4\\.0\t`));
      local.cancel();
      remote.cancel();
    } finally {
      for (const listener of listeners) listener.disconnect();
    }
  });
});

async function waitFor(condition: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
