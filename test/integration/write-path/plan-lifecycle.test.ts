import { AuthorKind } from "@taskplans/contract";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { DATABASES, randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

describe.each(DATABASES)("plan lifecycle on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect);
  });
  afterAll(() => app.stop());

  it("SavePlan creates a plan at version 1 with revision 1, title Plan, and GetPlan returns it", async () => {
    const taskId = await app.newTask();
    const written = await app.plans.savePlan({ taskId, content: "# Goal\nship it\n" });
    expect(written.plan).toMatchObject({
      taskId,
      title: "Plan",
      content: "",
      version: 1,
      contentBytes: 15,
      contentChars: 15,
    });
    expect(written.plan?.createdBy).toBe("user");
    expect(written.revision).toMatchObject({ number: 1, coalesced: false });
    const { plan } = await app.plans.getPlan({ taskId });
    expect(plan).toMatchObject({ content: "# Goal\nship it\n", version: 1, latestRevisionNumber: 1 });
    expect(app.events.typesFor(taskId)).toEqual(["plan.created", "plan.revision.created"]);
  });

  it("a write acknowledgement reports sizes but never the content", async () => {
    const taskId = await app.newTask();
    const content = "é".repeat(50_000);
    const written = await app.plans.savePlan({ taskId, content });
    expect(written.plan?.content).toBe("");
    expect(written.plan?.contentBytes).toBe(100_000);
    expect(written.plan?.contentChars).toBe(50_000);
  });

  it("SavePlan accepts empty content (an editor may clear the plan)", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "x" });
    await app.plans.savePlan({ taskId, content: "" });
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("");
  });

  it("stores content byte-exactly (CRLF, NUL, astral characters, 10,000 lines)", async () => {
    const taskId = await app.newTask();
    const content = `a\r\nb\u0000c😀\u200b\n${"line\n".repeat(10_000)}`;
    await app.plans.savePlan({ taskId, content });
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe(content);
  });

  it("the same author within the window coalesces into the newest revision; the version still increases", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "one" });
    const second = await app.plans.savePlan({ taskId, content: "two" });
    expect(second.revision).toMatchObject({ number: 1, coalesced: true });
    expect(second.plan?.version).toBe(2);
    const state = await planState(app.plans, taskId);
    expect(state.revisions).toHaveLength(1);
    const revision = await app.plans.getPlanRevision({ taskId, revisionId: second.revision?.id });
    expect(revision.revision?.content).toBe("two");
    expect(app.events.eventsFor(taskId).at(-1)).toMatchObject({
      type: "plan.revision.created",
      coalesced: true,
    });
    expect(app.events.typesFor(taskId)).toEqual([
      "plan.created",
      "plan.revision.created",
      "plan.updated",
      "plan.revision.created",
    ]);
  });

  it("another author (kind or name) adds a revision", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "one", author: { name: "Ann" } });
    const byBob = await app.plans.savePlan({ taskId, content: "two", author: { name: "Bob" } });
    const byAgent = await app.plans.savePlan({
      taskId,
      content: "three",
      author: { kind: AuthorKind.AUTHOR_KIND_AGENT, name: "Bob" },
    });
    expect([byBob.revision?.number, byAgent.revision?.number]).toEqual([2, 3]);
    const { revisions } = await planState(app.plans, taskId);
    expect(revisions.map((r) => [r.revisionNumber, r.authorKind, r.authorName])).toEqual([
      [3, AuthorKind.AUTHOR_KIND_AGENT, "Bob"],
      [2, AuthorKind.AUTHOR_KIND_USER, "Bob"],
      [1, AuthorKind.AUTHOR_KIND_USER, "Ann"],
    ]);
  });

  it("keeps the title when a save omits it and applies it when given", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "a", title: "Launch" });
    await app.plans.savePlan({ taskId, content: "b" });
    expect((await app.plans.getPlan({ taskId })).plan?.title).toBe("Launch");
    await app.plans.savePlan({ taskId, content: "c", title: "Renamed" });
    expect((await app.plans.getPlan({ taskId })).plan?.title).toBe("Renamed");
  });

  it("DeletePlan keeps the revisions; a re-created plan continues versions and revision numbers", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "v1" });
    await app.plans.savePlan({ taskId, content: "v2" });
    await app.plans.deletePlan({ taskId });
    expect((await rpcError(app.plans.getPlan({ taskId }))).reason).toBe("PLAN_NOT_FOUND");
    expect((await planState(app.plans, taskId)).revisions).toHaveLength(1);
    const recreated = await app.plans.savePlan({ taskId, content: "again" });
    expect(recreated.plan?.version).toBe(4); // 1, 2, delete bumps to 3, re-create 4: never reused
    expect(recreated.revision).toMatchObject({ number: 2, coalesced: false });
    expect(app.events.typesFor(taskId)).toEqual([
      "plan.created",
      "plan.revision.created",
      "plan.updated",
      "plan.revision.created",
      "plan.deleted",
      "plan.created",
      "plan.revision.created",
    ]);
  });

  it("DeletePlan without a plan is PLAN_NOT_FOUND; with a stale version ABORTED VERSION_MISMATCH and nothing changes", async () => {
    const taskId = await app.newTask();
    expect((await rpcError(app.plans.deletePlan({ taskId }))).reason).toBe("PLAN_NOT_FOUND");
    await app.plans.savePlan({ taskId, content: "keep me" });
    const before = await planState(app.plans, taskId);
    const stale = await rpcError(app.plans.deletePlan({ taskId, expectedVersion: 99 }));
    expect([stale.code, stale.reason]).toEqual([10, "VERSION_MISMATCH"]);
    expect(await planState(app.plans, taskId)).toEqual(before);
    await app.plans.deletePlan({ taskId, expectedVersion: before.plan?.version });
    expect((await planState(app.plans, taskId)).plan).toBeNull();
  });

  it("RevertPlan adds a marked revision copying the target, never coalesced, and emits updated, revision.created, reverted", async () => {
    const taskId = await app.newTask();
    const first = await app.plans.savePlan({
      taskId,
      content: "original",
      title: "T1",
      author: { name: "A" },
    });
    await app.plans.savePlan({ taskId, content: "changed", title: "T2", author: { name: "B" } });
    const reverted = await app.plans.revertPlan({ taskId, revisionId: first.revision?.id });
    expect(reverted.revision).toMatchObject({ number: 3, coalesced: false });
    expect((await app.plans.getPlan({ taskId })).plan).toMatchObject({
      content: "original",
      title: "T1",
      version: 3,
    });
    const marker = (await app.plans.getPlanRevision({ taskId, revisionId: reverted.revision?.id })).revision;
    expect(marker).toMatchObject({
      revertOfRevisionId: first.revision?.id,
      content: "original",
      authorName: "User",
    });
    expect(app.events.typesFor(taskId).slice(-3)).toEqual([
      "plan.updated",
      "plan.revision.created",
      "plan.reverted",
    ]);
    // The same author right after: the marker is permanent, so a new revision is added.
    const after = await app.plans.savePlan({ taskId, content: "edit after revert" });
    expect(after.revision).toMatchObject({ number: 4, coalesced: false });
  });

  it("RevertPlan recreates a deleted plan", async () => {
    const taskId = await app.newTask();
    const first = await app.plans.savePlan({ taskId, content: "old" });
    await app.plans.deletePlan({ taskId });
    await app.plans.revertPlan({ taskId, revisionId: first.revision?.id });
    expect((await app.plans.getPlan({ taskId })).plan).toMatchObject({ content: "old", version: 3 });
  });

  it("ListPlanRevisions pages newest first: 0 means 20, above 100 means 100, tokens continue", async () => {
    const taskId = await app.newTask();
    for (let i = 1; i <= 25; i++)
      await app.plans.savePlan({ taskId, content: `rev ${i}`, author: { name: `u${i}` } });
    const first = await app.plans.listPlanRevisions({ taskId, pageSize: 0 });
    expect(first.revisions.map((r) => r.revisionNumber)).toEqual([...Array(20).keys()].map((i) => 25 - i));
    expect(first.revisions.every((r) => r.content === "" && r.contentBytes > 0)).toBe(true);
    const second = await app.plans.listPlanRevisions({ taskId, pageSize: 0, pageToken: first.nextPageToken });
    expect(second.revisions.map((r) => r.revisionNumber)).toEqual([5, 4, 3, 2, 1]);
    expect(second.nextPageToken).toBe("");
    const clamped = await app.plans.listPlanRevisions({ taskId, pageSize: 1000 });
    expect(clamped.revisions).toHaveLength(25);
    const small = await app.plans.listPlanRevisions({ taskId, pageSize: 25 });
    expect(small.nextPageToken).toBe("");
  });

  it("GetPlanRevision is task-scoped: another task's revision is REVISION_NOT_FOUND", async () => {
    const taskA = await app.newTask();
    const taskB = await app.newTask();
    const a = await app.plans.savePlan({ taskId: taskA, content: "secret of A" });
    await app.plans.savePlan({ taskId: taskB, content: "b" });
    const failure = await rpcError(app.plans.getPlanRevision({ taskId: taskB, revisionId: a.revision?.id }));
    expect([failure.code, failure.reason]).toEqual([5, "REVISION_NOT_FOUND"]);
    expect(failure.message).not.toContain("secret");
  });

  it("MarkImplementationStarted: first mark wins, no revision, no version change", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "plan" });
    const before = await planState(app.plans, taskId);
    const first = await app.plans.markImplementationStarted({ taskId, sessionId: "s-1", actor: "Ann" });
    expect(first.plan).toMatchObject({
      implementationStartedBy: "Ann",
      implementationStartedSessionId: "s-1",
      version: 1,
    });
    const again = await app.plans.markImplementationStarted({ taskId, sessionId: "s-2", actor: "Bob" });
    expect(again.plan).toMatchObject({
      implementationStartedBy: "Ann",
      implementationStartedSessionId: "s-1",
    });
    expect(again.plan?.implementationStartedAt).toEqual(first.plan?.implementationStartedAt);
    const after = await planState(app.plans, taskId);
    expect(after.revisions).toEqual(before.revisions);
    expect(after.plan?.version).toBe(before.plan?.version);
    // A later content write keeps the marker.
    await app.plans.savePlan({ taskId, content: "plan 2" });
    expect((await app.plans.getPlan({ taskId })).plan?.implementationStartedSessionId).toBe("s-1");
  });

  it("MarkImplementationStarted without a plan is PLAN_NOT_FOUND, without a session INVALID_FIELD", async () => {
    const taskId = await app.newTask();
    expect((await rpcError(app.plans.markImplementationStarted({ taskId, sessionId: "s" }))).reason).toBe(
      "PLAN_NOT_FOUND",
    );
    const noSession = await rpcError(app.plans.markImplementationStarted({ taskId, sessionId: "" }));
    expect([noSession.reason, noSession.fieldViolations[0]?.field]).toEqual(["INVALID_FIELD", "session_id"]);
  });

  it("TaskService creates, reads and deletes tasks; DeleteTask removes the plan and its revisions", async () => {
    const taskId = randomId("task");
    const created = await app.tasks.createTask({ taskId, workspaceId: "ws-9", title: "Build it" });
    expect(created.task).toMatchObject({ taskId, workspaceId: "ws-9", title: "Build it" });
    expect((await app.tasks.getTask({ taskId })).task?.title).toBe("Build it");
    const duplicate = await rpcError(app.tasks.createTask({ taskId, workspaceId: "ws-9" }));
    expect([duplicate.code, duplicate.reason]).toEqual([6, "TASK_EXISTS"]);
    await app.plans.savePlan({ taskId, content: "x" });
    await app.tasks.deleteTask({ taskId });
    expect((await rpcError(app.tasks.getTask({ taskId }))).reason).toBe("TASK_NOT_FOUND");
    expect((await rpcError(app.plans.listPlanRevisions({ taskId }))).reason).toBe("TASK_NOT_FOUND");
    expect((await rpcError(app.plans.savePlan({ taskId, content: "y" }))).reason).toBe("TASK_NOT_FOUND");
  });
});
