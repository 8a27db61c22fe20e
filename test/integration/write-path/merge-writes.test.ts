import { MergeMethod } from "@taskplans/contract";
import { rpcError } from "../../harness/calls/rpc";
import { planState } from "../../harness/model/plan-state";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = 2;
const person = { kind: 2, name: "Ada" };
const agent = { kind: 1, name: "planner" };
const PLAN = "# Plan\n\n- [ ] one\n- [ ] two\n- [ ] three\n- [ ] four\n";

// The opt-in three-way merge of a stale CreatePlan, replace and edit, on a real server and
// database: a clean merge is one write with its marker; every refusal leaves the plan, its version
// and its revisions as they were.
describe.each(DATABASES)("merging a stale write, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect);
  });
  afterAll(() => app.stop());

  // A plan at version 1 that a person then changed (a ticked checkbox: version 2).
  async function staleByOneTick(): Promise<string> {
    const { taskId } = await app.planWith(PLAN);
    await app.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] four",
      newText: "- [x] four",
      author: person,
    });
    return taskId;
  }

  it("an edit at a stale version merges with the other writer's change, as one write marked with its versions", async () => {
    const taskId = await staleByOneTick();
    const written = await app.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] one",
      newText: "- [x] one",
      merge: true,
      author: agent,
    });
    expect(written.merge).toEqual({ fromVersion: 1, toVersion: 2 });
    expect(written.mergeMethod).toBe(MergeMethod.MERGE_METHOD_EDIT_REAPPLIED);
    expect([written.plan?.version, written.revision?.coalesced]).toEqual([3, false]);
    const { plan } = await app.plans.getPlan({ taskId });
    expect(plan?.content).toBe("# Plan\n\n- [x] one\n- [ ] two\n- [ ] three\n- [x] four\n");
    const { revision } = await app.plans.getPlanRevision({ taskId, revisionId: written.revision?.id ?? "" });
    expect([revision?.merge, revision?.authorName]).toEqual([{ fromVersion: 1, toVersion: 2 }, "planner"]);
    // Nothing is coalesced into a merged revision (its marker stays true).
    const next = await app.plans.editPlan({
      taskId,
      expectedVersion: 3,
      oldText: "- [ ] two",
      newText: "- [x] two",
      author: agent,
    });
    expect(next.revision?.coalesced).toBe(false);
  });

  it("a replace and a create at a stale version merge the same way", async () => {
    const taskId = await staleByOneTick();
    const replaced = await app.plans.updatePlan({
      taskId,
      expectedVersion: 1,
      content: PLAN.replace("- [ ] two", "- [ ] two, then test"),
      merge: true,
    });
    expect(replaced.merge).toEqual({ fromVersion: 1, toVersion: 2 });
    expect(replaced.mergeMethod).toBe(MergeMethod.MERGE_METHOD_LINES);
    const created = await app.plans.createPlan({
      taskId,
      expectedVersion: 2,
      content: PLAN.replace("- [ ] four", "- [x] four (done)"),
      merge: true,
    });
    expect(created.merge).toEqual({ fromVersion: 2, toVersion: 3 });
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe(
      "# Plan\n\n- [ ] one\n- [ ] two, then test\n- [ ] three\n- [x] four (done)\n",
    );
  });

  it("with a current version, merge changes nothing: an ordinary write without a marker", async () => {
    const { taskId } = await app.planWith(PLAN);
    const written = await app.plans.updatePlan({
      taskId,
      expectedVersion: 1,
      content: `${PLAN}- [ ] five\n`,
      merge: true,
    });
    expect([written.merge, written.mergeMethod, written.plan?.version]).toEqual([undefined, undefined, 2]);
  });

  it("a conflict is ABORTED MERGE_CONFLICT with the regions, and writes nothing", async () => {
    const taskId = await staleByOneTick();
    const before = await planState(app.plans, taskId);
    const failure = await rpcError(
      app.plans.editPlan({
        taskId,
        expectedVersion: 1,
        oldText: "- [ ] four",
        newText: "- [ ] four (dropped)",
        merge: true,
      }),
    );
    expect([failure.code, failure.reason]).toEqual([10, "MERGE_CONFLICT"]);
    expect(failure.metadata).toMatchObject({
      base_version: "1",
      current_version: "2",
      conflict_regions: "1",
    });
    expect(failure.metadata.conflicts).toBe(
      "@@ base lines 6-6 @@\n<<<<<<< yours\n- [ ] four (dropped)\n||||||| base\n- [ ] four\n=======\n- [x] four\n>>>>>>> current\n",
    );
    expect(failure.message).toMatch(
      /^Plan was not changed because your change and the changes made since version 1/,
    );
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("refusals change nothing: no base, merge on an append or without a version, a reduction, too large", async () => {
    const taskId = await staleByOneTick();
    const before = await planState(app.plans, taskId);
    const refusals: [Promise<unknown>, number, string][] = [
      [
        app.plans.updatePlan({ taskId, expectedVersion: 9, content: PLAN, merge: true }),
        11,
        "HISTORY_UNAVAILABLE",
      ],
      [
        app.plans.updatePlan({ taskId, content: "more", mode: APPEND, merge: true }),
        3,
        "MERGE_NOT_APPLICABLE",
      ],
      [app.plans.createPlan({ taskId, content: PLAN, merge: true }), 3, "MERGE_NOT_APPLICABLE"],
      [
        app.plans.editPlan({
          taskId,
          expectedVersion: 1,
          oldText: "- [ ] nowhere",
          newText: "x",
          merge: true,
        }),
        9,
        "EDIT_TEXT_NOT_FOUND",
      ],
    ];
    for (const [call, code, reason] of refusals) {
      const failure = await rpcError(call);
      expect([failure.code, failure.reason]).toEqual([code, reason]);
    }
    expect(await planState(app.plans, taskId)).toEqual(before);

    // The reduction guard is measured against the current content.
    const long = Array.from({ length: 100 }, (_, i) => `- [ ] step ${i} of the long plan\n`).join("");
    const { taskId: big } = await app.planWith(long);
    await app.plans.updatePlan({ taskId: big, content: "- [ ] appended", mode: APPEND, author: person });
    const bigBefore = await planState(app.plans, big);
    // Ours keeps the first and the last two of 100 lines; theirs appended after the last.
    const kept = long.split("\n").slice(0, 1).join("\n") + "\n" + long.split("\n").slice(98).join("\n");
    const reduced = await rpcError(
      app.plans.updatePlan({ taskId: big, expectedVersion: 1, content: kept, merge: true }),
    );
    expect(reduced.reason).toBe("REDUCTION_NOT_ACKNOWLEDGED");
    // Ours is exactly at the size limit; with theirs' append the merged document is past it.
    const atLimit = "x".repeat(262_144 - Buffer.byteLength(long) - 1) + "\n" + long;
    const tooLarge = await rpcError(
      app.plans.updatePlan({ taskId: big, expectedVersion: 1, content: atLimit, merge: true }),
    );
    expect(tooLarge.reason).toBe("PLAN_TOO_LARGE");
    expect(await planState(app.plans, big)).toEqual(bigBefore);
  });

  // Issue 56: the write two parties make most often at once, two ticks of neighbouring boxes.
  it("ticking the box next to the one another writer ticked merges, both ticks kept", async () => {
    const { taskId } = await app.planWith("# Plan\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d\n");
    await app.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] c",
      newText: "- [x] c",
      author: person,
    });
    const written = await app.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] d",
      newText: "- [x] d",
      merge: true,
      author: agent,
    });
    expect([written.merge, written.plan?.version]).toEqual([{ fromVersion: 1, toVersion: 2 }, 3]);
    expect(written.mergeMethod).toBe(MergeMethod.MERGE_METHOD_EDIT_REAPPLIED);
    const { plan } = await app.plans.getPlan({ taskId });
    expect(plan?.content).toBe("# Plan\n- [ ] a\n- [ ] b\n- [x] c\n- [x] d\n");
    // The same tick sent as a whole document is line-merged: neighbouring lines merge.
    const replaced = await app.plans.updatePlan({
      taskId,
      expectedVersion: 2,
      content: "# Plan\n- [ ] a\n- [x] b\n- [x] c\n- [ ] d\n",
      merge: true,
      author: agent,
    });
    expect([replaced.merge, replaced.mergeMethod]).toEqual([
      { fromVersion: 2, toVersion: 3 },
      MergeMethod.MERGE_METHOD_LINES,
    ]);
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe(
      "# Plan\n- [ ] a\n- [x] b\n- [x] c\n- [x] d\n",
    );
  });

  it("a stale edit whose old_text is still unique is re-applied, even on a line the other writer changed too", async () => {
    const { taskId } = await app.planWith("# Plan\n- [ ] write the migration\n- [ ] test it\n");
    await app.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "the migration\n",
      newText: "the migration (owner: Ada)\n",
      author: person,
    });
    const written = await app.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] write",
      newText: "- [x] write",
      merge: true,
      author: agent,
    });
    expect([written.merge, written.mergeMethod, written.plan?.version]).toEqual([
      { fromVersion: 1, toVersion: 2 },
      MergeMethod.MERGE_METHOD_EDIT_REAPPLIED,
      3,
    ]);
    const { plan } = await app.plans.getPlan({ taskId });
    expect(plan?.content).toBe("# Plan\n- [x] write the migration (owner: Ada)\n- [ ] test it\n");
    const { revision } = await app.plans.getPlanRevision({ taskId, revisionId: written.revision?.id ?? "" });
    expect([revision?.merge, revision?.authorName]).toEqual([{ fromVersion: 1, toVersion: 2 }, "planner"]);
  });

  it("a stale edit whose old_text is now ambiguous falls back to the line merge, and its conflict writes nothing", async () => {
    const { taskId } = await app.planWith("# Plan\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d\n");
    // The other writer put a "- [ ] d" first and changed the old one: "- [ ] d" occurs twice.
    await app.plans.updatePlan({
      taskId,
      expectedVersion: 1,
      content: "# Plan\n- [ ] d\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d later\n",
      author: person,
    });
    const before = await planState(app.plans, taskId);
    const failure = await rpcError(
      app.plans.editPlan({
        taskId,
        expectedVersion: 1,
        oldText: "- [ ] d",
        newText: "- [x] d",
        merge: true,
        author: agent,
      }),
    );
    expect([failure.code, failure.reason]).toEqual([10, "MERGE_CONFLICT"]);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  // Each merge is prepared before the task's lock, on a read of its own; a writer whose read is
  // overtaken by another's commit prepares again on the new state (write-pipeline.ts prepared).
  // Whole documents, so that each is line-merged (a stale edit would be re-applied instead).
  it("six stale writers merging at once each land once, on the state before them", async () => {
    const items = ["a", "b", "c", "d", "e", "f"];
    const plan = `# Plan\n\n${items.map((i) => `- [ ] ${i}\n`).join("\n")}`;
    const { taskId } = await app.planWith(plan);
    const written = await Promise.all(
      items.map((item) =>
        app.client().plans.updatePlan({
          taskId,
          expectedVersion: 1,
          content: plan.replace(`- [ ] ${item}`, `- [x] ${item}`),
          merge: true,
          author: agent,
        }),
      ),
    );
    const versions = written.map((w) => w.plan?.version ?? 0).sort((x, y) => x - y);
    expect(versions).toEqual([2, 3, 4, 5, 6, 7]);
    // The first to commit was current (no merge); every other merged from 1 onto the one before it.
    for (const w of written) {
      const version = w.plan?.version ?? 0;
      expect(w.merge ?? null).toEqual(version === 2 ? null : { fromVersion: 1, toVersion: version - 1 });
    }
    const stored = (await app.plans.getPlan({ taskId })).plan;
    expect(stored?.content).toBe(`# Plan\n\n${items.map((i) => `- [x] ${i}\n`).join("\n")}`);
  });

  it("a retry with the same request_id answers the merged write again and writes nothing", async () => {
    const taskId = await staleByOneTick();
    const request = {
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] two",
      newText: "- [x] two",
      merge: true,
      requestId: `merge-${taskId}`,
    };
    const first = await app.plans.editPlan(request);
    const after = await planState(app.plans, taskId);
    const again = await app.plans.editPlan(request);
    expect(again).toEqual(first);
    expect(await planState(app.plans, taskId)).toEqual(after);
    const reused = await rpcError(app.plans.editPlan({ ...request, merge: false }));
    expect(reused.reason).toBe("REQUEST_ID_REUSED");
  });
});
