import { SignJWT } from "jose";
import { WriteMode } from "@taskplans/contract";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = WriteMode.WRITE_MODE_APPEND;
const HOUR = 60 * 60 * 1000;

describe.each(DATABASES)("idempotent agent writes with request_id on $label", ({ dialect }) => {
  let app: TestApp;
  let now = Date.parse("2026-11-29T12:00:00.000Z");
  beforeAll(async () => {
    app = await startTestApp(dialect, { overrides: { clock: () => new Date(now) } });
  });
  afterAll(() => app.stop());

  it("a retried append with the same request_id returns the original result and appends once", async () => {
    const { taskId } = await app.planWith("base");
    const first = await app.plans.updatePlan({
      taskId,
      content: "## Once",
      mode: APPEND,
      requestId: "req-1",
    });
    const events = app.events.published.length;
    const retry = await app.plans.updatePlan({
      taskId,
      content: "## Once",
      mode: APPEND,
      requestId: "req-1",
    });
    expect(retry).toEqual(first);
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\n## Once");
    expect(app.events.published.length).toBe(events);
  });

  it("without a request_id the seed's non-idempotence holds (AC-TASKS-PLAN-APPEND-003.6)", async () => {
    const { taskId } = await app.planWith("base");
    await app.plans.updatePlan({ taskId, content: "x", mode: APPEND });
    await app.plans.updatePlan({ taskId, content: "x", mode: APPEND });
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\nx\n\nx");
  });

  it("the same request_id with a different payload is INVALID_ARGUMENT REQUEST_ID_REUSED and changes nothing", async () => {
    const { taskId } = await app.planWith("base");
    await app.plans.updatePlan({ taskId, content: "first", mode: APPEND, requestId: "req-2" });
    const before = await planState(app.plans, taskId);
    const failure = await rpcError(
      app.plans.updatePlan({ taskId, content: "second", mode: APPEND, requestId: "req-2" }),
    );
    expect([failure.code, failure.reason]).toEqual([3, "REQUEST_ID_REUSED"]);
    expect(failure.message).toMatch(/^Plan was not changed because/);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("request ids are per task, and a failed request is not remembered", async () => {
    const a = await app.planWith("a");
    const b = await app.planWith("b");
    await app.plans.updatePlan({ taskId: a.taskId, content: "x", mode: APPEND, requestId: "shared" });
    await app.plans.updatePlan({ taskId: b.taskId, content: "y", mode: APPEND, requestId: "shared" });
    expect((await app.plans.getPlan({ taskId: b.taskId })).plan?.content).toBe("b\n\ny");
    const stale = await rpcError(
      app.plans.updatePlan({ taskId: a.taskId, content: "new", expectedVersion: 1, requestId: "fix-1" }),
    );
    expect(stale.reason).toBe("VERSION_MISMATCH");
    const current = (await app.plans.getPlan({ taskId: a.taskId })).plan?.version;
    await app.plans.updatePlan({
      taskId: a.taskId,
      content: "new",
      expectedVersion: current,
      requestId: "fix-1",
    });
    expect((await app.plans.getPlan({ taskId: a.taskId })).plan?.content).toBe("new");
  });

  it("works for CreatePlan, EditPlan and RestorePlanRevision too", async () => {
    const taskId = await app.newTask();
    const created = await app.plans.createPlan({ taskId, content: "status: 1", requestId: "c" });
    expect(await app.plans.createPlan({ taskId, content: "status: 1", requestId: "c" })).toEqual(created);
    const edit = { taskId, expectedVersion: 1, oldText: "1", newText: "2", requestId: "e" };
    const edited = await app.plans.editPlan(edit);
    expect(await app.plans.editPlan(edit)).toEqual(edited);
    const revision = (await app.plans.listPlanRevisions({ taskId })).revisions[0];
    const saved = await app.plans.savePlan({ taskId, content: "by a person" });
    const restore = {
      taskId,
      revisionId: revision?.id,
      expectedVersion: saved.plan?.version,
      expectedRevisionVersion: revision?.revisionVersion,
      requestId: "r",
    };
    const restored = await app.plans.restorePlanRevision(restore);
    expect(await app.plans.restorePlanRevision(restore)).toEqual(restored);
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("status: 2");
  });

  it("remembers an id for at least 24 hours; later writes to the task prune older ids", async () => {
    const { taskId } = await app.planWith("base");
    await app.plans.updatePlan({ taskId, content: "day one", mode: APPEND, requestId: "old" });
    now += 24 * HOUR - 1;
    expect(
      (await rpcError(app.plans.updatePlan({ taskId, content: "other", mode: APPEND, requestId: "old" })))
        .reason,
    ).toBe("REQUEST_ID_REUSED");
    now += 2 * HOUR;
    await app.plans.updatePlan({ taskId, content: "day two", mode: APPEND, requestId: "new" }); // prunes "old"
    await app.plans.updatePlan({ taskId, content: "reused", mode: APPEND, requestId: "old" });
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\nday one\n\nday two\n\nreused");
  });

  it("a malformed request_id is INVALID_FIELD request_id", async () => {
    const { taskId } = await app.planWith("base");
    const failure = await rpcError(
      app.plans.updatePlan({ taskId, content: "x", mode: APPEND, requestId: "has space" }),
    );
    expect([failure.reason, failure.fieldViolations[0]?.field]).toEqual(["INVALID_FIELD", "request_id"]);
  });

  it("a retry that reaches another replica (or a restarted server) is still recognized", async () => {
    const { taskId } = await app.planWith("base");
    const first = await app.plans.updatePlan({ taskId, content: "once", mode: APPEND, requestId: "cross" });
    const other = await startTestApp(dialect, {
      env: { PLAN_DATABASE_URL: app.databaseUrl },
      overrides: { clock: () => new Date(now) },
    });
    try {
      expect(
        await other.plans.updatePlan({ taskId, content: "once", mode: APPEND, requestId: "cross" }),
      ).toEqual(first);
    } finally {
      await other.stop();
    }
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\nonce");
  });
});

describe.each(DATABASES)("request ids belong to their caller, on $label", ({ dialect }) => {
  const SECRET = "idempotency-secret-0123456789-0123456789";
  const token = (subject: string) =>
    new SignJWT({ kind: "agent", name: "Same Name", workspaces: ["ws-1"] })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(subject)
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode(SECRET));

  it("auth off: two authors sending the same request_id and payload each get their own write", async () => {
    const app = await startTestApp(dialect);
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "base" });
      const send = (name: string) =>
        app.plans.updatePlan({
          taskId,
          content: "- note",
          mode: APPEND,
          requestId: "same",
          author: { name },
        });
      const first = await send("Agent A");
      const second = await send("Agent B");
      expect([first.plan?.version, second.plan?.version]).toEqual([2, 3]);
      expect(await send("Agent A")).toEqual(first); // A's retry is still A's acknowledgement
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\n- note\n\n- note");
    } finally {
      await app.stop();
    }
  });

  it("auth on: two token subjects with the same request_id are two writes; a subject's retry replays", async () => {
    const app = await startTestApp(dialect, { env: { PLAN_AUTH_JWT_SECRET: SECRET } });
    try {
      const [alice, bob] = [app.client(await token("alice")), app.client(await token("bob"))];
      const taskId = "shared-task";
      await alice.tasks.createTask({ taskId, workspaceId: "ws-1" });
      await alice.plans.createPlan({ taskId, content: "base" });
      const send = (client: typeof alice) =>
        client.plans.updatePlan({ taskId, content: "- step", mode: APPEND, requestId: "r-1" });
      const fromAlice = await send(alice);
      const fromBob = await send(bob);
      expect([fromAlice.plan?.version, fromBob.plan?.version]).toEqual([2, 3]);
      expect(await send(bob)).toEqual(fromBob);
      const state = await planState(alice.plans, taskId);
      expect([state.plan?.content, state.plan?.version]).toEqual(["base\n\n- step\n\n- step", 3]);
    } finally {
      await app.stop();
    }
  });
});
