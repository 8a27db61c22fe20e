import { SignJWT } from "jose";
import { Metadata } from "@grpc/grpc-js";
import { planState } from "../harness/plan-state";
import { rawCall, bytesField } from "../harness/raw-call";
import { rpcError } from "../harness/rpc";
import { DATABASES, startTestApp, type TestApp } from "../harness/test-app";

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
});

describe("per-caller write rate limit with auth off (keyed by the client's address)", () => {
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
