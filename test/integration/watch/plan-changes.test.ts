import { applyPatch } from "diff";
import { rpcError } from "../../harness/calls/rpc";
import { planState } from "../../harness/model/plan-state";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = 2;
const UPDATED = 3;
const agent = (name: string) => ({ kind: 1, name });

// GetPlanChanges and DiffPlanRevisions on a real server and database: the diff from the content at a
// version (derived from the change history, appends' prefix rows included) applies to give the
// current content exactly; a version that can no longer be derived is refused, never diffed wrongly.
describe.each(DATABASES)("what changed since a version, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, { env: { PLAN_COALESCE_WINDOW_MS: "0" } });
  });
  afterAll(() => app.stop());

  // The content at every version, read as each write answered it.
  async function contentNow(taskId: string): Promise<string> {
    return (await app.plans.getPlan({ taskId })).plan?.content ?? "";
  }

  it("diffs from every past version (copies and appends' prefix rows) to the current content exactly", async () => {
    const { taskId } = await app.planWith("# Plan\r\n\r\n- [ ] one\r\n- [ ] two\r\n");
    const contents = new Map<number, string>([[1, await contentNow(taskId)]]);
    const writes = [
      () => app.plans.updatePlan({ taskId, content: "- [ ] three", mode: APPEND, author: agent("A") }),
      () =>
        app.plans.updatePlan({ taskId, content: "## Notes\u00a0\n\nend", mode: APPEND, author: agent("B") }),
      async () => {
        const version = (await app.plans.getPlan({ taskId })).plan?.version;
        return app.plans.editPlan({
          taskId,
          expectedVersion: version,
          oldText: "- [ ] two",
          newText: "- [x] two",
          author: agent("A"),
        });
      },
      () => app.plans.updatePlan({ taskId, content: "- [ ] four", mode: APPEND, author: agent("C") }),
    ];
    for (const write of writes) {
      const written = await write();
      contents.set(written.plan?.version ?? 0, await contentNow(taskId));
    }
    const current = await contentNow(taskId);
    for (const [version, content] of contents) {
      const answer = await app.plans.getPlanChanges({ taskId, sinceVersion: version });
      expect(answer.plan?.version).toBe(5);
      expect(answer.plan?.content).toBe("");
      expect(answer.sinceVersion).toBe(version);
      expect(applyPatch(content, answer.diff?.unifiedDiff ?? "")).toBe(current);
      expect(answer.diff?.diffBytes).toBe(Buffer.byteLength(answer.diff?.unifiedDiff ?? ""));
      expect(answer.changes.map((c) => c.version)).toEqual([2, 3, 4, 5].filter((v) => v > version));
    }
    const since1 = await app.plans.getPlanChanges({ taskId, sinceVersion: 1 });
    expect(since1.changes.map((c) => [c.kind, c.author?.name])).toEqual([
      [UPDATED, "A"],
      [UPDATED, "B"],
      [UPDATED, "A"],
      [UPDATED, "C"],
    ]);
    const diffLines = (since1.diff?.unifiedDiff ?? "").split("\n").slice(2);
    expect([since1.diff?.linesAdded, since1.diff?.linesRemoved]).toEqual([
      diffLines.filter((line) => line.startsWith("+")).length,
      diffLines.filter((line) => line.startsWith("-")).length,
    ]);
  });

  it("the current version gives an empty diff and no changes", async () => {
    const { taskId, version } = await app.planWith("# Plan\n");
    const answer = await app.plans.getPlanChanges({ taskId, sinceVersion: version });
    expect([answer.diff?.unifiedDiff, answer.changes, answer.changesTruncated]).toEqual(["", [], false]);
    expect([answer.diff?.oldBytes, answer.diff?.newBytes]).toEqual([7, 7]);
  });

  it("lists at most the newest 100 changes and says it left some out", async () => {
    const { taskId } = await app.planWith("# Plan");
    for (let i = 0; i < 101; i++) await app.plans.updatePlan({ taskId, content: `- ${i}`, mode: APPEND });
    const answer = await app.plans.getPlanChanges({ taskId, sinceVersion: 1 });
    expect(answer.changes).toHaveLength(100);
    expect([answer.changes[0]?.version, answer.changes.at(-1)?.version, answer.changesTruncated]).toEqual([
      3,
      102,
      true,
    ]);
    // "# Plan" gains its newline, then a blank line and a line per append.
    expect([answer.diff?.linesRemoved, answer.diff?.linesAdded]).toEqual([1, 203]);
  });

  it("a version never written or ahead of the plan is OUT_OF_RANGE HISTORY_UNAVAILABLE with the oldest version", async () => {
    const { taskId } = await app.planWith("# Plan");
    await app.plans.updatePlan({ taskId, content: "more", mode: APPEND });
    for (const sinceVersion of [0, 3, 99]) {
      const failure = await rpcError(app.plans.getPlanChanges({ taskId, sinceVersion }));
      expect([failure.code, failure.reason]).toEqual([11, "HISTORY_UNAVAILABLE"]);
      expect(failure.metadata).toMatchObject({
        since_version: String(sinceVersion),
        current_version: "2",
        oldest_version: "1",
        next_action: "Read the whole plan with GetPlan and use its version from now on.",
      });
    }
  });

  it("after the change history was trimmed to the history budget, refuses the versions it lost", async () => {
    const budgeted = await startTestApp(dialect, { env: { PLAN_HISTORY_MAX_BYTES: "100000" } });
    try {
      const taskId = await budgeted.newTask();
      for (let i = 0; i < 12; i++)
        await budgeted.plans.savePlan({ taskId, content: `${i}`.padEnd(20_000, "x") });
      // Versions 9 to 12 are kept (history-budget.test.ts).
      const before = await planState(budgeted.plans, taskId);
      const failure = await rpcError(budgeted.plans.getPlanChanges({ taskId, sinceVersion: 5 }));
      expect([failure.code, failure.reason, failure.metadata.oldest_version]).toEqual([
        11,
        "HISTORY_UNAVAILABLE",
        "9",
      ]);
      const answer = await budgeted.plans.getPlanChanges({ taskId, sinceVersion: 9 });
      expect(applyPatch("8".padEnd(20_000, "x"), answer.diff?.unifiedDiff ?? "")).toBe(
        "11".padEnd(20_000, "x"),
      );
      expect(await planState(budgeted.plans, taskId)).toEqual(before);
    } finally {
      await budgeted.stop();
    }
  });

  it("after the change history was pruned, refuses the pruned versions; appends' prefixes still derive", async () => {
    const pruned = await startTestApp(dialect, {
      env: { PLAN_CHANGES_MAX_VERSIONS: "3", PLAN_CHANGES_PRUNE_INTERVAL_MS: "100" },
    });
    try {
      const { taskId } = await pruned.planWith("# Plan");
      for (let i = 0; i < 5; i++) await pruned.plans.updatePlan({ taskId, content: `- ${i}`, mode: APPEND });
      // Versions 4, 5 and 6 are kept once the pruner's first pass after the last append ran. A pass
      // between two appends keeps older ones (3, 4 and 5), so wait for version 3 to go, not version 2.
      const since = (sinceVersion: number) => pruned.plans.getPlanChanges({ taskId, sinceVersion });
      for (
        let tries = 0;
        tries < 200 &&
        (await since(3).then(
          () => true,
          () => false,
        ));
        tries++
      )
        await new Promise((resolve) => setTimeout(resolve, 25));
      const failure = await rpcError(since(2));
      expect([failure.code, failure.reason, failure.metadata.oldest_version]).toEqual([
        11,
        "HISTORY_UNAVAILABLE",
        "4",
      ]);
      const answer = await pruned.plans.getPlanChanges({ taskId, sinceVersion: 4 });
      expect(applyPatch("# Plan\n\n- 0\n\n- 1\n\n- 2", answer.diff?.unifiedDiff ?? "")).toBe(
        await pruned.plans.getPlan({ taskId }).then((r) => r.plan?.content),
      );
    } finally {
      await pruned.stop();
    }
  });

  it("a deleted plan is NOT_FOUND PLAN_NOT_FOUND; a missing since_version is INVALID_FIELD", async () => {
    const { taskId, version } = await app.planWith("# Plan");
    expect((await rpcError(app.plans.getPlanChanges({ taskId }))).fieldViolations).toMatchObject([
      { field: "since_version", description: "is required" },
    ]);
    await app.plans.deletePlan({ taskId });
    const failure = await rpcError(app.plans.getPlanChanges({ taskId, sinceVersion: version }));
    expect([failure.code, failure.reason]).toEqual([5, "PLAN_NOT_FOUND"]);
    const missing = await rpcError(app.plans.getPlanChanges({ taskId: "no-such-task", sinceVersion: 1 }));
    expect(missing.reason).toBe("TASK_NOT_FOUND");
  });

  it("a version at which the plan was deleted diffs from empty content", async () => {
    const { taskId } = await app.planWith("# Old");
    await app.plans.deletePlan({ taskId });
    await app.plans.createPlan({ taskId, content: "# New\n" });
    const answer = await app.plans.getPlanChanges({ taskId, sinceVersion: 2 });
    expect(answer.diff?.unifiedDiff).toBe("--- version 2\n+++ version 3\n@@ -0,0 +1,1 @@\n+# New\n");
    expect(answer.changes.map((c) => c.kind)).toEqual([2]);
  });
});

describe.each(DATABASES)("the diff between two revisions, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, { env: { PLAN_COALESCE_WINDOW_MS: "0" } });
  });
  afterAll(() => app.stop());

  it("diffs either way, with both revisions' metadata, also after the plan was deleted", async () => {
    const { taskId, revisionId: first } = await app.planWith("a\nb\nc\n");
    const second = await app.plans.savePlan({ taskId, content: "a\nB\nc\n" });
    await app.plans.deletePlan({ taskId });
    const forward = await app.plans.diffPlanRevisions({
      taskId,
      fromRevisionId: first,
      toRevisionId: second.revision?.id ?? "",
    });
    expect(forward.diff?.unifiedDiff).toBe(
      "--- revision 1\n+++ revision 2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
    );
    expect([
      forward.fromRevision?.revisionNumber,
      forward.toRevision?.revisionNumber,
      forward.toRevision?.content,
    ]).toEqual([1, 2, ""]);
    const backward = await app.plans.diffPlanRevisions({
      taskId,
      fromRevisionId: second.revision?.id ?? "",
      toRevisionId: first,
    });
    expect(applyPatch("a\nB\nc\n", backward.diff?.unifiedDiff ?? "")).toBe("a\nb\nc\n");
  });

  it("an unknown revision, or another task's, is NOT_FOUND REVISION_NOT_FOUND naming it", async () => {
    const { taskId, revisionId } = await app.planWith("x");
    const other = await app.planWith("y");
    for (const missing of ["no-such-revision", other.revisionId]) {
      const failure = await rpcError(
        app.plans.diffPlanRevisions({ taskId, fromRevisionId: revisionId, toRevisionId: missing }),
      );
      expect([failure.code, failure.reason, failure.metadata.revision_id]).toEqual([
        5,
        "REVISION_NOT_FOUND",
        missing,
      ]);
    }
  });
});
