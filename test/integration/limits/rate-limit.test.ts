import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { Metadata } from "@grpc/grpc-js";
import pino from "pino";
import { startApp } from "../../../src/app";
import { loadConfig } from "../../../src/config/config";
import { planState } from "../../harness/model/plan-state";
import { rawCall, bytesField } from "../../harness/calls/raw-call";
import { connect, rpcError } from "../../harness/calls/rpc";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = 2;
const SECRET = "rate-limit-secret-0123456789-0123456789";
const token = (subject: string) =>
  new SignJWT({ kind: "agent", name: subject, workspaces: ["ws-1"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(subject)
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(SECRET));

describe.each(DATABASES)("per-caller write rate limit, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: { PLAN_AUTH_JWT_SECRET: SECRET, PLAN_RATE_LIMIT_WRITES: "3", PLAN_RATE_LIMIT_WINDOW_MS: "60000" },
    });
  });
  afterAll(() => app.stop());

  it("past the limit a write is RESOURCE_EXHAUSTED RATE_LIMITED with RetryInfo and changes nothing; reads and other callers go on", async () => {
    const alice = app.client(await token("alice"));
    const bob = app.client(await token("bob"));
    const taskId = "rate-" + dialect;
    await alice.tasks.createTask({ taskId, workspaceId: "ws-1" }); // write 1
    await alice.plans.createPlan({ taskId, content: "# Plan" }); // write 2
    await alice.plans.updatePlan({ taskId, content: "- one", mode: APPEND }); // write 3
    const before = await planState(alice.plans, taskId);
    const failure = await rpcError(alice.plans.updatePlan({ taskId, content: "- two", mode: APPEND }));
    expect([failure.code, failure.reason]).toEqual([8, "RATE_LIMITED"]);
    expect(failure.message).toMatch(/^Plan was not changed because you sent more than 3 writes in 60000 ms/);
    expect(failure.metadata).toMatchObject({ limit_writes: "3", window_ms: "60000" });
    expect(Number(failure.metadata.retry_after_ms)).toBeGreaterThan(0);
    expect(await planState(alice.plans, taskId)).toEqual(before); // reads are not limited
    await bob.plans.updatePlan({ taskId, content: "- from bob", mode: APPEND }); // another caller
    expect((await bob.plans.getPlan({ taskId })).plan?.version).toBe(3);
  });

  it("the rejection carries google.rpc.RetryInfo with the wait", async () => {
    const carol = await token("carol");
    const metadata = () => {
      const m = new Metadata();
      m.set("authorization", `Bearer ${carol}`);
      return m;
    };
    const createTask = "/taskplans.v1.TaskService/CreateTask";
    const create = (id: string) =>
      Buffer.concat([bytesField(1, Buffer.from(id)), bytesField(2, Buffer.from("ws-1"))]);
    for (const id of ["c1", "c2", "c3"])
      expect((await rawCall(app.port, createTask, create(`${id}-${dialect}`), metadata())).error).toBeNull();
    const { error, details } = await rawCall(app.port, createTask, create(`c4-${dialect}`), metadata());
    expect([error?.code, details?.errorInfo?.reason]).toEqual([8, "RATE_LIMITED"]);
    const delay = details?.retryInfo?.retryDelay;
    const ms = (delay?.seconds ?? 0) * 1000 + (delay?.nanos ?? 0) / 1e6;
    expect(ms).toBeGreaterThan(50_000); // most of the 60 s window is left
    expect(ms).toBeLessThanOrEqual(60_000);
    expect((await rpcError(app.client(carol).tasks.getTask({ taskId: `c4-${dialect}` }))).reason).toBe(
      "TASK_NOT_REACHABLE",
    );
  });

  it("a refused CreateTask or DeleteTask says the task was not created or deleted, not that a plan was not changed", async () => {
    const dave = app.client(await token("dave"));
    const kept = `kept-${dialect}`;
    await dave.tasks.createTask({ taskId: kept, workspaceId: "ws-1" }); // write 1
    await dave.plans.createPlan({ taskId: kept, content: "# Kept" }); // write 2
    await dave.tasks.getTask({ taskId: kept }); // a read: not counted
    await dave.plans.updatePlan({ taskId: kept, content: "- one", mode: APPEND }); // write 3
    const before = await planState(dave.plans, kept);
    const create = await rpcError(dave.tasks.createTask({ taskId: `new-${dialect}`, workspaceId: "ws-1" }));
    expect([create.code, create.reason]).toEqual([8, "RATE_LIMITED"]);
    expect(create.message).toMatch(/^Task was not created because you sent more than 3 writes in 60000 ms/);
    const remove = await rpcError(dave.tasks.deleteTask({ taskId: kept }));
    expect([remove.code, remove.reason]).toEqual([8, "RATE_LIMITED"]);
    expect(remove.message).toMatch(/^Task was not deleted because you sent more than 3 writes/);
    for (const message of [create.message, remove.message])
      expect(message).not.toMatch(/Plan was not changed/);
    // Nothing happened: no new task, the old one and its plan as they were.
    expect((await rpcError(dave.tasks.getTask({ taskId: `new-${dialect}` }))).reason).toBe(
      "TASK_NOT_REACHABLE",
    );
    expect((await dave.tasks.getTask({ taskId: kept })).task?.taskId).toBe(kept);
    expect(await planState(dave.plans, kept)).toEqual(before);
  });
});

/** A server started from `env` alone, as `npm start` would (no test harness defaults). */
async function startWithEnv(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-rate-"));
  const config = loadConfig({
    PLAN_GRPC_ADDRESS: "127.0.0.1:0",
    PLAN_HTTP_ADDRESS: "127.0.0.1:0",
    PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}`,
    PLAN_METRICS_ADDRESS: "",
    PLAN_LOG_LEVEL: "silent",
    ...env,
  });
  const app = await startApp(config, { logger: pino({ level: "silent" }) });
  const clients: ReturnType<typeof connect>[] = [];
  return {
    client(bearer?: string) {
      const client = connect(app.port, bearer);
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients) client.close();
      await app.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("the rate limit's defaults (PLAN_RATE_LIMIT_WRITES unset)", () => {
  // A long window, so that every write below falls into one window however slow the machine is.
  const window = { PLAN_RATE_LIMIT_WINDOW_MS: "600000" };

  it("with auth off there is no limit: one local back end writes more than 100 times in one window", async () => {
    const server = await startWithEnv(window);
    try {
      const { plans, tasks } = server.client();
      const taskId = "busy-back-end";
      await tasks.createTask({ taskId, workspaceId: "ws-1" });
      await plans.createPlan({ taskId, content: "# Plan" });
      for (let i = 0; i < 150; i++) await plans.updatePlan({ taskId, content: `- ${i}`, mode: APPEND });
      expect((await plans.getPlan({ taskId })).plan?.version).toBe(151);
    } finally {
      await server.stop();
    }
  });

  it("with auth on each token subject may make 100 writes per window; the 101st is RATE_LIMITED, another subject goes on", async () => {
    const server = await startWithEnv({ ...window, PLAN_AUTH_JWT_SECRET: SECRET });
    try {
      const erin = server.client(await token("erin"));
      const frank = server.client(await token("frank"));
      const taskId = "limited-by-default";
      await erin.tasks.createTask({ taskId, workspaceId: "ws-1" });
      await erin.plans.createPlan({ taskId, content: "# Plan" });
      for (let i = 0; i < 98; i++) await erin.plans.updatePlan({ taskId, content: `- ${i}`, mode: APPEND });
      const before = await planState(erin.plans, taskId);
      const failure = await rpcError(erin.plans.updatePlan({ taskId, content: "- 101st", mode: APPEND }));
      expect([failure.code, failure.reason, failure.metadata.limit_writes]).toEqual([
        8,
        "RATE_LIMITED",
        "100",
      ]);
      expect(await planState(erin.plans, taskId)).toEqual(before);
      await frank.plans.updatePlan({ taskId, content: "- from frank", mode: APPEND });
    } finally {
      await server.stop();
    }
  });
});

describe("per-caller write rate limit with auth off, when PLAN_RATE_LIMIT_WRITES is set (keyed by the client's address)", () => {
  it("an author name chosen per request does not escape the limit", async () => {
    const app = await startTestApp("sqlite", {
      env: { PLAN_RATE_LIMIT_WRITES: "2", PLAN_RATE_LIMIT_WINDOW_MS: "60000" },
    });
    try {
      const taskId = "open-rate";
      await app.tasks.createTask({ taskId, workspaceId: "ws-1" });
      await app.plans.createPlan({ taskId, content: "# Plan", author: { name: "A" } });
      const failure = await rpcError(
        app.plans.updatePlan({ taskId, content: "x", mode: APPEND, author: { name: "B" } }),
      );
      expect([failure.code, failure.reason]).toEqual([8, "RATE_LIMITED"]);
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("# Plan");
    } finally {
      await app.stop();
    }
  });
});
