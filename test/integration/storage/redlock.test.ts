import { Redlock } from "@sesamecare-oss/redlock";
import Redis from "ioredis";
import pino from "pino";
import { WriteMode } from "@taskplans/contract";
import { RedlockTaskLock, type RedlockSettings } from "../../../src/locking/redlock-task-lock";
import type { LockLease } from "../../../src/plans/ports/task-lock";
import { waitFor } from "../../harness/servers/processes";
import { redisKeys } from "../../../src/locking/redis-keys";
import { GatedLock } from "../../harness/fixtures/gated-lock";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { planState } from "../../harness/model/plan-state";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { rpcError } from "../../harness/calls/rpc";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = WriteMode.WRITE_MODE_APPEND;

describe("Redlock across replicas (MariaDB + 3 Redis nodes)", () => {
  let nodes: RedisNode[];
  let replicas: TestApp[];
  let env: Record<string, string>;

  beforeAll(async () => {
    nodes = await startRedisNodes(3);
    const first = await startTestApp("mysql", {
      env: {
        PLAN_REDIS_URLS: nodes.map((n) => n.url).join(","),
        PLAN_COALESCE_WINDOW_MS: "0",
      },
    });
    env = {
      PLAN_REDIS_URLS: nodes.map((n) => n.url).join(","),
      PLAN_DATABASE_URL: first.databaseUrl,
      PLAN_COALESCE_WINDOW_MS: "0",
    };
    // The default lock wait (10 s): 40 writers queued on one task must all get through on a
    // loaded machine (with 2 s, the last of them timed out in a CI run sharing its two cores).
    replicas = [first, await startTestApp("mysql", { env })];
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    for (const node of nodes) await node.stop();
  });

  it("concurrent appends through two replicas all land exactly once, in one gap-free history", async () => {
    const [a, b] = replicas as [TestApp, TestApp];
    const taskId = await a.newTask();
    await a.plans.createPlan({ taskId, content: "# Log" });
    const tokens = Array.from({ length: 40 }, (_, i) => `token-${i}`);
    const results = await Promise.all(
      tokens.map((token, i) =>
        (i % 2 ? a : b).client().plans.updatePlan({ taskId, content: token, mode: APPEND }),
      ),
    );
    const content = (await b.plans.getPlan({ taskId })).plan?.content ?? "";
    for (const token of tokens) expect(content.split("\n").filter((line) => line === token)).toHaveLength(1);
    expect(results.map((r) => r.plan?.version).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(
      tokens.map((_, i) => i + 2),
    );
    const state = await planState(a.plans, taskId);
    expect(state.revisions.map((r) => r.revisionNumber)).toEqual(tokens.map((_, i) => 41 - i).concat(1));
  });

  it("a stale edit with merge racing appends through the other replica keeps every append once and the edit, in one gap-free history", async () => {
    const [a, b] = replicas as [TestApp, TestApp];
    const taskId = await a.newTask();
    // The agent read version 1. An unchanged line separates its edit from where appends land.
    await a.plans.createPlan({ taskId, content: "# Plan\n- [ ] one\n\n## Log\n" });
    const tokens = Array.from({ length: 20 }, (_, i) => `token-${i}`);
    const append = (token: string) => b.client().plans.updatePlan({ taskId, content: token, mode: APPEND });
    // Five land first, so the edit is stale whatever the order of the rest; fifteen race it.
    const first = [];
    for (const token of tokens.slice(0, 5)) first.push(await append(token));
    const edit = a.client().plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] one",
      newText: "- [x] one",
      merge: true,
    });
    const [written, ...raced] = await Promise.all([edit, ...tokens.slice(5).map(append)]);
    const version = written.plan?.version ?? 0;
    expect(written.merge).toEqual({ fromVersion: 1, toVersion: version - 1 });
    const content = (await b.plans.getPlan({ taskId })).plan?.content ?? "";
    expect(content.startsWith("# Plan\n- [x] one\n\n## Log\n")).toBe(true);
    for (const token of tokens) expect(content.split("\n").filter((line) => line === token)).toHaveLength(1);
    const versions = [version, ...[...first, ...raced].map((r) => r.plan?.version ?? 0)].sort(
      (x, y) => x - y,
    );
    expect(versions).toEqual(Array.from({ length: 21 }, (_, i) => i + 2));
  });

  it("a task locked elsewhere fails LOCK_UNAVAILABLE after the bounded wait, writes nothing, and works once released", async () => {
    const a = await startTestApp("mysql", { env: { ...env, PLAN_LOCK_WAIT_MS: "2000" } });
    replicas.push(a); // stopped with the others
    const taskId = await a.newTask();
    await a.plans.createPlan({ taskId, content: "base" });
    const before = await planState(a.plans, taskId);
    const clients = nodes.map((n) => new Redis(n.url));
    const other = new Redlock(clients, { retryCount: 0 });
    const held = await other.acquire([redisKeys("taskplans").lock(taskId)], 10_000);
    try {
      const failure = await rpcError(a.plans.updatePlan({ taskId, content: "x", mode: APPEND }));
      expect([failure.code, failure.reason]).toEqual([14, "LOCK_UNAVAILABLE"]);
      expect(await planState(a.plans, taskId)).toEqual(before);
      // The wait is also capped by the call deadline: with 300 ms left (the configured wait is
      // 2,000 ms) the server answers LOCK_UNAVAILABLE before the client's DEADLINE_EXCEEDED.
      const capped = await rpcError(
        a.plans.updatePlan(
          { taskId, content: "y", mode: APPEND },
          {
            deadline: Date.now() + 300,
          },
        ),
      );
      expect([capped.code, capped.reason]).toEqual([14, "LOCK_UNAVAILABLE"]);
      expect(await planState(a.plans, taskId)).toEqual(before);
    } finally {
      await held.release();
      await other.quit();
    }
    await a.plans.updatePlan({ taskId, content: "after release", mode: APPEND });
    expect((await a.plans.getPlan({ taskId })).plan?.content).toBe("base\n\nafter release");
  });

  it("one Redis node down still serializes writes; losing quorum fails writes with LOCK_UNAVAILABLE while reads work", async () => {
    const [a, b] = replicas as [TestApp, TestApp];
    const taskId = await a.newTask();
    await a.plans.createPlan({ taskId, content: "base" });
    await nodes[0]?.kill();
    try {
      await Promise.all([
        a.plans.updatePlan({ taskId, content: "one", mode: APPEND }),
        b.plans.updatePlan({ taskId, content: "two", mode: APPEND }),
      ]);
      await nodes[1]?.kill();
      const before = await planState(b.plans, taskId);
      const failure = await rpcError(a.plans.updatePlan({ taskId, content: "three", mode: APPEND }));
      expect([failure.code, failure.reason]).toEqual([14, "LOCK_UNAVAILABLE"]);
      expect(await planState(b.plans, taskId)).toEqual(before); // reads keep working
    } finally {
      await nodes[0]?.restart();
      await nodes[1]?.restart();
    }
    const content = (await a.plans.getPlan({ taskId })).plan?.content ?? "";
    expect(content.split("\n\n").sort()).toEqual(["base", "one", "two"]);
  });
});

describe("the Redis lease while a write runs", () => {
  let nodes: RedisNode[];
  beforeAll(async () => {
    nodes = await startRedisNodes(3);
  });
  afterAll(async () => {
    for (const node of nodes) await node.stop();
  });

  // Lock settings on this describe's nodes, under a key prefix of the test's own.
  function lockSettings(name: string, overrides: Partial<RedlockSettings> = {}): RedlockSettings {
    return {
      urls: nodes.map((n) => n.url),
      keyPrefix: `${name}-${Date.now()}`,
      leaseMs: 5_000,
      retryDelayMs: 5,
      maxBatch: 8,
      ...overrides,
    };
  }

  it("runs two writes of a task at once under one lease per process, queues a third, and keeps other processes out", async () => {
    const settings = lockSettings("pipeline", { maxBatch: 2 });
    const [here, elsewhere] = await Promise.all(
      [0, 1].map(() => RedlockTaskLock.connect(settings, pino({ level: "silent" }))),
    );
    const log: string[] = [];
    const signals = new Map<string, LockLease>();
    const gates = new Map<string, () => void>();
    const write = (lock: RedlockTaskLock | undefined, name: string) =>
      lock?.withLock("task-1", 5_000, async (lease) => {
        signals.set(name, lease);
        log.push(`${name} start`);
        await new Promise<void>((resolve) => gates.set(name, resolve));
        log.push(`${name} end`);
      });
    const until = async (entry: string) => {
      while (!log.includes(entry)) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    // A process refused the lock says so on the waiting channel: "did not start" is checked after
    // such a refusal, not after a fixed sleep.
    const heard = new Redis(nodes[0]?.url ?? "");
    let refusals = 0;
    heard.on("message", (_channel: string, message: string) => {
      if (message.endsWith(" task-1")) refusals += 1;
    });
    await heard.subscribe(redisKeys(settings.keyPrefix).waiting());
    const refusedAfter = async (seen: number) => {
      while (refusals <= seen) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    try {
      const writes = [write(here, "a1"), write(here, "a2"), write(here, "a3"), write(elsewhere, "b1")];
      await until("a1 start");
      await until("a2 start");
      await refusedAfter(0); // b1 asked Redis and was refused while a1 and a2 hold the lease
      expect(log).toEqual(["a1 start", "a2 start"]);
      expect(signals.get("a1")).toBe(signals.get("a2")); // one Redis lease for both
      gates.get("a1")?.();
      gates.get("a2")?.();
      // maxBatch 2 is spent: the lease goes back to Redis before any further write, here or there.
      const third = () => log.find((entry) => entry === "a3 start" || entry === "b1 start");
      while (!third()) await new Promise((resolve) => setTimeout(resolve, 5));
      const [firstOut, secondOut] = third() === "a3 start" ? ["a3", "b1"] : ["b1", "a3"];
      await refusedAfter(refusals); // the other one asked Redis since, and was refused
      expect(log).not.toContain(`${secondOut} start`);
      gates.get(firstOut)?.();
      await until(`${secondOut} start`);
      gates.get(secondOut)?.();
      await Promise.all(writes);
      // The third and fourth writes ran one after the other, each under a lease of its own.
      expect(log.slice(4)).toEqual([
        `${firstOut} start`,
        `${firstOut} end`,
        `${secondOut} start`,
        `${secondOut} end`,
      ]);
      expect(signals.get("a3")).not.toBe(signals.get("a1"));
    } finally {
      heard.disconnect();
      await Promise.all([here?.close(), elsewhere?.close()]);
    }
  });

  it("keeps one lease across batches while no other process waits for the task", async () => {
    const settings = lockSettings("lone", { maxBatch: 2 });
    const lock = await RedlockTaskLock.connect(settings, pino({ level: "silent" }));
    try {
      const signals = await Promise.all(
        Array.from({ length: 7 }, () =>
          lock.withLock("task-1", 5_000, async (lease) => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            return lease;
          }),
        ),
      );
      // Seven writes, batches of two, and still one lease: nobody else was waiting to be handed it.
      expect(new Set(signals).size).toBe(1);
    } finally {
      await lock.close();
    }
  });

  it("announces a release only when another process waits for the lease", async () => {
    const settings = lockSettings("announce", { maxBatch: 1 });
    const [here, elsewhere] = await Promise.all(
      [0, 1].map(() => RedlockTaskLock.connect(settings, pino({ level: "silent" }))),
    );
    const keys = redisKeys(settings.keyPrefix);
    const heard = new Redis(nodes[0]?.url ?? "");
    const messages: string[] = [];
    heard.on("message", (channel: string, message: string) =>
      messages.push(`${channel === keys.released() ? "released" : "waiting"} ${message.split(" ").at(-1)}`),
    );
    await heard.subscribe(keys.released(), keys.waiting());
    const until = async (entry: string) => {
      while (!messages.includes(entry)) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    try {
      // Uncontended: three writes, one after the other, publish nothing.
      for (let i = 0; i < 3; i++) await here?.withLock("quiet", 5_000, async () => undefined);
      // Contended: the holder hears the other process wait, and announces its release.
      let open = () => undefined as void;
      const holding = here?.withLock("busy", 5_000, () => new Promise<void>((resolve) => (open = resolve)));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const waiting = elsewhere?.withLock("busy", 5_000, async () => "taken");
      await until("waiting busy");
      open();
      await holding;
      await until("released busy");
      expect(await waiting).toBe("taken");
      // The process published "released busy" after the quiet writes, on the same connections: any
      // announcement of those would have been delivered before it.
      expect(messages.filter((m) => m.endsWith(" quiet"))).toEqual([]);
    } finally {
      heard.disconnect();
      await Promise.all([here?.close(), elsewhere?.close()]);
    }
  });

  it("is extended while a write outlasts it, so the write commits and the lock stays exclusive", async () => {
    const { logger } = capturingLogger();
    const settings = lockSettings("lease", { leaseMs: 600 });
    const lock = new GatedLock(await RedlockTaskLock.connect(settings, logger));
    const app = await startTestApp("mysql", { overrides: { lock, logger } });
    const probe = new Redis(nodes[0]?.url ?? "");
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "base" });
      lock.hold();
      const slow = app.plans.updatePlan({ taskId, content: "slow write", mode: APPEND });
      await lock.untilEntered(lock.entered + 1);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // 2.5 leases
      expect(await probe.pttl(redisKeys(settings.keyPrefix).lock(taskId))).toBeGreaterThan(0);
      lock.open();
      await expect(slow).resolves.toMatchObject({ plan: { version: 2 } });
    } finally {
      probe.disconnect();
      await app.stop();
    }
  });

  it("a write whose lease is lost while it waits to commit (Redis majority gone) is ABORTED WRITE_CONFLICT and changes nothing", async () => {
    const { logger, lines } = capturingLogger();
    const settings = lockSettings("lost", { leaseMs: 600 });
    const lock = new GatedLock(await RedlockTaskLock.connect(settings, logger));
    const app = await startTestApp("mysql", { overrides: { lock, logger } });
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "base" });
      const before = await planState(app.plans, taskId);
      lock.hold();
      const write = app.plans.updatePlan({ taskId, content: "too late", mode: APPEND });
      await lock.untilEntered(lock.entered + 1);
      const lease = lock.leases[lock.leases.length - 1];
      await nodes[0]?.kill();
      await nodes[1]?.kill();
      // The next extension (every third of the lease) fails, or the lease expires: either marks it lost.
      await waitFor("the lease marked lost", async () => lease?.lost === true, 10_000);
      lock.open();
      const failure = await rpcError(write);
      expect([failure.code, failure.reason]).toEqual([10, "WRITE_CONFLICT"]);
      expect(failure.message).toMatch(/^Plan was not changed because/);
      expect(await planState(app.plans, taskId)).toEqual(before); // reads need no lock
      expect(lines.some((line) => line.includes("lock lease could not be extended"))).toBe(true);
    } finally {
      await nodes[0]?.restart();
      await nodes[1]?.restart();
      await app.stop();
    }
  });

  it("a failed release after a committed write is logged, never reported to the caller", async () => {
    const { logger, lines } = capturingLogger();
    const settings = lockSettings("release");
    const lock = new GatedLock(await RedlockTaskLock.connect(settings, logger));
    const app = await startTestApp("mysql", { overrides: { lock, logger } });
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "base" });
      lock.hold();
      const write = app.plans.updatePlan({ taskId, content: "committed", mode: APPEND });
      await lock.untilEntered(lock.entered + 1);
      await nodes[0]?.kill();
      await nodes[1]?.kill();
      lock.open();
      await expect(write).resolves.toMatchObject({ plan: { version: 2 } });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\ncommitted");
      expect(lines.some((line) => line.includes("lock release failed"))).toBe(true);
    } finally {
      await nodes[0]?.restart();
      await nodes[1]?.restart();
      await app.stop();
    }
  });
});
