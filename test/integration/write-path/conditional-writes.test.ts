import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { SignJWT } from "jose";
import { WriteMode } from "@taskplans/contract";
import { SavePlanRequest, WritePlanResponse } from "@taskplans/contract";
import { rpcError } from "../../harness/calls/rpc";
import { expectRejected as rejectedWithoutChange } from "../../harness/calls/expect-rejected";
import { DATABASES, randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = WriteMode.WRITE_MODE_APPEND;
const LARGE = `# Plan\n${"a detailed step of the plan\n".repeat(100)}`; // 2,807 code points

describe.each(DATABASES)("conditional agent writes (seed 003) on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect);
  });
  afterAll(() => app.stop());

  async function expectRejected(taskId: string, call: () => Promise<unknown>, code: number, reason: string) {
    const failure = await rejectedWithoutChange(app, taskId, call, { code, reason });
    // No rejection hands out the current version: the caller must read the plan again.
    expect(Object.keys(failure.metadata).filter((key) => key.includes("version"))).toEqual([]);
    return failure;
  }

  it("UpdatePlan REPLACE without expected_version is INVALID_ARGUMENT VERSION_REQUIRED", async () => {
    const { taskId } = await app.planWith("content");
    const failure = await expectRejected(
      taskId,
      () => app.plans.updatePlan({ taskId, content: "new" }),
      3,
      "VERSION_REQUIRED",
    );
    expect(failure.metadata.next_action).toMatch(/GetPlan/);
    expect(failure.metadata.next_action).toMatch(/append/);
  });

  it("a stale expected_version is ABORTED VERSION_MISMATCH; an editor save makes an agent's version stale", async () => {
    const { taskId, version } = await app.planWith("content");
    await app.plans.savePlan({ taskId, content: "edited by a person" });
    const failure = await expectRejected(
      taskId,
      () => app.plans.updatePlan({ taskId, content: "agent's rewrite", expectedVersion: version }),
      10,
      "VERSION_MISMATCH",
    );
    expect(failure.metadata.next_action).toMatch(/Read the plan again/);
  });

  it("CreatePlan creates without a version and is ALREADY_EXISTS PLAN_EXISTS over a plan without one", async () => {
    const { taskId, version } = await app.planWith("first");
    expect(version).toBe(1);
    const failure = await expectRejected(
      taskId,
      () => app.plans.createPlan({ taskId, content: "second" }),
      6,
      "PLAN_EXISTS",
    );
    expect(failure.metadata.next_action).toMatch(/append/);
  });

  it("CreatePlan with the current version is a conditional replace (title kept when absent)", async () => {
    const { taskId, version } = await app.planWith("first", "Kept title");
    const replaced = await app.plans.createPlan({ taskId, content: "second", expectedVersion: version });
    expect(replaced.plan).toMatchObject({ version: 2, title: "Kept title" });
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("second");
    await expectRejected(
      taskId,
      () => app.plans.createPlan({ taskId, content: "third", expectedVersion: version }),
      10,
      "VERSION_MISMATCH",
    );
  });

  it("a stale version given for a plan that does not exist never creates one (also after a delete)", async () => {
    const fresh = await app.newTask();
    await expectRejected(
      fresh,
      () => app.plans.createPlan({ taskId: fresh, content: "x", expectedVersion: 1 }),
      10,
      "VERSION_MISMATCH",
    );
    const { taskId, version } = await app.planWith("soon deleted");
    await app.plans.deletePlan({ taskId });
    await expectRejected(
      taskId,
      () => app.plans.createPlan({ taskId, content: "x", expectedVersion: version }),
      10,
      "VERSION_MISMATCH",
    );
    const recreated = await app.plans.createPlan({ taskId, content: "re-created" });
    expect(recreated.plan?.version).toBeGreaterThan(version + 1);
  });

  it("APPEND needs no version (AC-TASKS-PLAN-APPEND-006.5) but a given one must match", async () => {
    const { taskId, version } = await app.planWith("base");
    await app.plans.updatePlan({ taskId, content: "one", mode: APPEND });
    await expectRejected(
      taskId,
      () => app.plans.updatePlan({ taskId, content: "two", mode: APPEND, expectedVersion: version }),
      10,
      "VERSION_MISMATCH",
    );
    const ok = await app.plans.updatePlan({
      taskId,
      content: "two",
      mode: APPEND,
      expectedVersion: version + 1,
    });
    expect(ok.plan?.version).toBe(version + 2);
  });

  it("a replace keeping fewer than half of >= 2,000 code points is FAILED_PRECONDITION REDUCTION_NOT_ACKNOWLEDGED", async () => {
    const { taskId, version } = await app.planWith(LARGE);
    const failure = await expectRejected(
      taskId,
      () => app.plans.updatePlan({ taskId, content: "- [x] done", expectedVersion: version }),
      9,
      "REDUCTION_NOT_ACKNOWLEDGED",
    );
    expect(failure.metadata).toMatchObject({ prior_chars: String(LARGE.length), new_chars: "10" });
    expect(failure.metadata.next_action).toMatch(/append/);
    // A conditional replace through CreatePlan is judged the same way.
    await expectRejected(
      taskId,
      () => app.plans.createPlan({ taskId, content: "tiny", expectedVersion: version }),
      9,
      "REDUCTION_NOT_ACKNOWLEDGED",
    );
  });

  it("an acknowledged reduction is stored on a new revision and names the revision that holds the prior content", async () => {
    const { taskId, version } = await app.planWith(LARGE);
    const written = await app.plans.updatePlan({
      taskId,
      content: "- [x] done",
      expectedVersion: version,
      acknowledgeReduction: true,
    });
    expect(written.truncation).toEqual({ priorChars: LARGE.length, newChars: 10, priorRevisionNumber: 1 });
    expect(written.revision).toMatchObject({ number: 2, coalesced: false }); // same author, within the window: still new
    // Recovery through ListPlanRevisions + GetPlanRevision alone.
    const listed = await app.plans.listPlanRevisions({ taskId });
    const prior = listed.revisions.find((r) => r.revisionNumber === written.truncation?.priorRevisionNumber);
    const recovered = await app.plans.getPlanRevision({ taskId, revisionId: prior?.id });
    expect(recovered.revision?.content).toBe(LARGE);
  });

  it("exactly half, or a prior below 2,000 code points, is not a suspicious reduction", async () => {
    const big = await app.planWith("x".repeat(2000));
    await app.plans.updatePlan({
      taskId: big.taskId,
      content: "y".repeat(1000),
      expectedVersion: big.version,
    });
    const small = await app.planWith("x".repeat(1999));
    const written = await app.plans.updatePlan({
      taskId: small.taskId,
      content: "y",
      expectedVersion: small.version,
    });
    expect(written.truncation).toBeUndefined();
  });

  it("acknowledge_reduction on an append is INVALID_ARGUMENT", async () => {
    const { taskId } = await app.planWith(LARGE);
    await expectRejected(
      taskId,
      () => app.plans.updatePlan({ taskId, content: "x", mode: APPEND, acknowledgeReduction: true }),
      3,
      "REDUCTION_ACK_NOT_APPLICABLE",
    );
  });

  it("two agents replacing with the same version: one wins, the other gets VERSION_MISMATCH", async () => {
    const { taskId, version } = await app.planWith("base");
    const [a, b] = [app.client(), app.client()];
    const results = await Promise.allSettled([
      a.plans.updatePlan({ taskId, content: "A's version", expectedVersion: version }),
      b.plans.updatePlan({ taskId, content: "B's version", expectedVersion: version }),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect([won.length, lost.length]).toEqual([1, 1]);
    expect((lost[0]?.reason as ServiceError).code).toBe(10);
    expect(["A's version", "B's version"]).toContain((await app.plans.getPlan({ taskId })).plan?.content);
  });

  it("two concurrent initial creates: one creates, the other is PLAN_EXISTS", async () => {
    const taskId = await app.newTask();
    const results = await Promise.allSettled([
      app.client().plans.createPlan({ taskId, content: "first" }),
      app.client().plans.createPlan({ taskId, content: "second" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    expect((lost?.reason as ServiceError).code).toBe(6);
  });

  it("AC-TASKS-PLAN-APPEND-005.3: the editor path ignores an unknown field (a mode) instead of rejecting it", async () => {
    const { taskId } = await app.planWith("before");
    // SavePlanRequest has no field 7; encode one as UpdatePlanRequest's mode=APPEND would look.
    const withUnknown = (request: SavePlanRequest) =>
      Buffer.concat([
        Buffer.from(SavePlanRequest.encode(request).finish()),
        Buffer.from([0x38, WriteMode.WRITE_MODE_APPEND]),
      ]);
    const channel = new Client(`127.0.0.1:${app.port}`, credentials.createInsecure());
    const response = await new Promise<WritePlanResponse>((resolve, reject) =>
      channel.makeUnaryRequest(
        "/taskplans.v1.PlanService/SavePlan",
        withUnknown,
        (bytes: Buffer) => WritePlanResponse.decode(bytes),
        SavePlanRequest.fromPartial({ taskId, content: "whole document from the editor" }),
        new Metadata(),
        (error, value) => (error || !value ? reject(error) : resolve(value)),
      ),
    );
    channel.close();
    expect(response.plan?.contentBytes).toBe(30);
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("whole document from the editor");
  });
});

describe("task reach for agent writes (AC-TASKS-PLAN-APPEND-005.6, 001.7)", () => {
  const SECRET = "conditional-writes-secret-0123456789";
  let app: TestApp;
  let owner: TestApp["plans"];
  let outsider: TestApp["plans"];
  let taskId: string;

  const sign = (workspaces: string[]) =>
    new SignJWT({ kind: "agent", name: "A", workspaces })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("a")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(SECRET));

  beforeAll(async () => {
    app = await startTestApp("sqlite", { env: { PLAN_AUTH_JWT_SECRET: SECRET } });
    const ownerClient = app.client(await sign(["ws-own"]));
    owner = ownerClient.plans;
    outsider = app.client(await sign(["ws-other"])).plans;
    taskId = randomId("task");
    await ownerClient.tasks.createTask({ taskId, workspaceId: "ws-own" });
    await owner.createPlan({ taskId, content: "private plan" });
  });
  afterAll(() => app.stop());

  it("AC-TASKS-PLAN-APPEND-005.6: an append to an unreachable task is PERMISSION_DENIED and reveals nothing", async () => {
    const failure = await rpcError(outsider.updatePlan({ taskId, content: "x", mode: APPEND }));
    expect([failure.code, failure.reason]).toEqual([7, "TASK_NOT_REACHABLE"]);
    expect(JSON.stringify(failure)).not.toContain("private");
    expect((await owner.getPlan({ taskId })).plan?.content).toBe("private plan");
  });

  it("AC-TASKS-PLAN-APPEND-001.7: mode validity before reach, reach before content validity", async () => {
    expect((await rpcError(outsider.updatePlan({ taskId, content: "", mode: 5 as WriteMode }))).reason).toBe(
      "INVALID_WRITE_MODE",
    );
    expect((await rpcError(outsider.updatePlan({ taskId, content: "", mode: APPEND }))).reason).toBe(
      "TASK_NOT_REACHABLE",
    );
    expect((await rpcError(owner.updatePlan({ taskId, content: "", mode: APPEND }))).reason).toBe(
      "CONTENT_REQUIRED",
    );
  });
});
