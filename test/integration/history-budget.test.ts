import { planState } from "../harness/plan-state";
import { rpcError } from "../harness/rpc";
import { DATABASES, startTestApp, type TestApp } from "../harness/test-app";

const APPEND = 2;

describe.each(DATABASES)("the per-task history budget, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: { PLAN_HISTORY_MAX_REVISIONS: "4", PLAN_HISTORY_MAX_BYTES: "3000", PLAN_COALESCE_WINDOW_MS: "0" },
    });
  });
  afterAll(() => app.stop());

  it("a write past the revision budget is RESOURCE_EXHAUSTED HISTORY_QUOTA_EXCEEDED with the limit, and changes nothing", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan" });
    for (const step of ["a", "b", "c"]) await app.plans.updatePlan({ taskId, content: step, mode: APPEND });
    const before = await planState(app.plans, taskId);
    expect(before.revisions).toHaveLength(4);
    const failure = await rpcError(app.plans.updatePlan({ taskId, content: "d", mode: APPEND }));
    expect([failure.code, failure.reason]).toEqual([8, "HISTORY_QUOTA_EXCEEDED"]);
    expect(failure.metadata).toMatchObject({ limit: "revisions", limit_revisions: "4", used_revisions: "4" });
    expect(failure.message).toMatch(
      /^Plan was not changed because the task's history would exceed its budget of 4 revisions/,
    );
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("reverts count against the byte budget (exempt from the size limit, not from the budget)", async () => {
    const taskId = await app.newTask();
    const first = await app.plans.savePlan({ taskId, content: "x".repeat(1_000) });
    await app.plans.savePlan({ taskId, content: "short" });
    await app.plans.revertPlan({ taskId, revisionId: first.revision?.id }); // 1,000 + 5 + 1,000 bytes
    const before = await planState(app.plans, taskId);
    const failure = await rpcError(app.plans.revertPlan({ taskId, revisionId: first.revision?.id }));
    expect([failure.code, failure.reason]).toEqual([8, "HISTORY_QUOTA_EXCEEDED"]);
    expect(failure.metadata).toMatchObject({ limit: "bytes", limit_bytes: "3000", used_bytes: "2005" });
    expect(await planState(app.plans, taskId)).toEqual(before);
  });
});
