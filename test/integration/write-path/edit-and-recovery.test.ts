import { RestoreStatus } from "@taskplans/contract";
import { GatedLock } from "../../harness/fixtures/gated-lock";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { expectRejected as rejectedWithoutChange } from "../../harness/calls/expect-rejected";
import { execSql } from "../../harness/databases/sql";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const LIMIT = 262_144;
const LARGE = `# Plan\n${"a detailed step of the plan\n".repeat(100)}`; // 2,807 code points

describe.each(DATABASES)("agent edits and recovery on $label", ({ dialect }) => {
  let app: TestApp;
  let lock: GatedLock;
  beforeAll(async () => {
    lock = new GatedLock();
    app = await startTestApp(dialect, { overrides: { lock } });
  });
  afterAll(() => app.stop());

  const expectRejected = (taskId: string, call: () => Promise<unknown>, code: number, reason: string) =>
    rejectedWithoutChange(app, taskId, call, { code, reason });

  describe("EditPlan", () => {
    it("replaces the one occurrence exactly, keeps CRLF, and coalesces like an agent write", async () => {
      const { taskId, version } = await app.planWith("- [ ] one\r\n- [ ] two\r\n");
      const edited = await app.plans.editPlan({
        taskId,
        expectedVersion: version,
        oldText: "- [ ] two",
        newText: "- [x] two",
      });
      expect(edited.plan?.version).toBe(version + 1);
      expect(edited.revision?.coalesced).toBe(true);
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("- [ ] one\r\n- [x] two\r\n");
    });

    it("an empty new_text deletes the match", async () => {
      const { taskId, version } = await app.planWith("keep DROP keep");
      await app.plans.editPlan({ taskId, expectedVersion: version, oldText: " DROP", newText: "" });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("keep keep");
    });

    it("empty old_text is EDIT_TEXT_REQUIRED before the lock and before plan existence", async () => {
      const taskId = await app.newTask();
      const arrived = lock.arrived;
      await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, oldText: "", newText: "x" }),
        3,
        "EDIT_TEXT_REQUIRED",
      );
      expect(lock.arrived).toBe(arrived);
    });

    it("no plan is PLAN_NOT_FOUND; a missing or stale version wins over an unmatched old_text", async () => {
      const fresh = await app.newTask();
      await expectRejected(
        fresh,
        () => app.plans.editPlan({ taskId: fresh, oldText: "a", newText: "b", expectedVersion: 1 }),
        5,
        "PLAN_NOT_FOUND",
      );
      const { taskId, version } = await app.planWith("content");
      await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, oldText: "absent", newText: "b" }),
        3,
        "VERSION_REQUIRED",
      );
      await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, oldText: "absent", newText: "b", expectedVersion: version + 7 }),
        10,
        "VERSION_MISMATCH",
      );
    });

    it("old_text absent or longer than the plan is EDIT_TEXT_NOT_FOUND", async () => {
      const { taskId, version } = await app.planWith("short");
      await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, expectedVersion: version, oldText: "shorter", newText: "x" }),
        9,
        "EDIT_TEXT_NOT_FOUND",
      );
      await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, expectedVersion: version, oldText: "Short", newText: "x" }),
        9,
        "EDIT_TEXT_NOT_FOUND",
      );
    });

    it("overlapping occurrences make old_text ambiguous: EDIT_TEXT_NOT_UNIQUE with occurrences", async () => {
      const { taskId, version } = await app.planWith("aaa");
      const failure = await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, expectedVersion: version, oldText: "aa", newText: "b" }),
        9,
        "EDIT_TEXT_NOT_UNIQUE",
      );
      expect(failure.metadata.occurrences).toBe("2");
    });

    it("an edit that would empty the plan is CONTENT_REQUIRED", async () => {
      const { taskId, version } = await app.planWith("everything");
      await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, expectedVersion: version, oldText: "everything", newText: "" }),
        3,
        "CONTENT_REQUIRED",
      );
    });

    it("a new_text that pushes the plan over the limit is PLAN_TOO_LARGE", async () => {
      const { taskId, version } = await app.planWith(`${"x".repeat(LIMIT - 10)}MARK`);
      const failure = await expectRejected(
        taskId,
        () =>
          app.plans.editPlan({ taskId, expectedVersion: version, oldText: "MARK", newText: "y".repeat(20) }),
        9,
        "PLAN_TOO_LARGE",
      );
      expect(failure.metadata.size_bytes).toBe(String(LIMIT - 10 + 20));
    });

    it("an edit removing most of a large plan needs acknowledge_reduction, like a replace", async () => {
      const { taskId, version } = await app.planWith(LARGE);
      const body = LARGE.slice("# Plan\n".length);
      await expectRejected(
        taskId,
        () => app.plans.editPlan({ taskId, expectedVersion: version, oldText: body, newText: "- done" }),
        9,
        "REDUCTION_NOT_ACKNOWLEDGED",
      );
      const acknowledged = await app.plans.editPlan({
        taskId,
        expectedVersion: version,
        oldText: body,
        newText: "- done",
        acknowledgeReduction: true,
      });
      expect(acknowledged.truncation).toMatchObject({
        priorChars: LARGE.length,
        newChars: 13,
        priorRevisionNumber: 1,
      });
    });

    it("edits one line of a 10,000-line plan", async () => {
      const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}`);
      const { taskId, version } = await app.planWith(`${lines.join("\n")}\n`);
      await app.plans.editPlan({
        taskId,
        expectedVersion: version,
        oldText: "\nline 5000\n",
        newText: "\nline 5000 (done)\n",
      });
      const content = (await app.plans.getPlan({ taskId })).plan?.content ?? "";
      expect(content.split("\n")[5000]).toBe("line 5000 (done)");
      expect(content.split("\n")).toHaveLength(10_001);
    });

    it("NUL characters match exactly; a lone surrogate from a JS client arrives as U+FFFD", async () => {
      const { taskId, version } = await app.planWith("a\u0000b");
      await app.plans.editPlan({ taskId, expectedVersion: version, oldText: "\u0000", newText: "-" });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("a-b");
      // Protobuf strings are UTF-8: the client library replaces a lone surrogate with U+FFFD.
      const lone = await app.planWith("x\ud800y");
      expect((await app.plans.getPlan({ taskId: lone.taskId })).plan?.content).toBe("x\ufffdy");
      await expectRejected(
        lone.taskId,
        () =>
          app.plans.editPlan({
            taskId: lone.taskId,
            expectedVersion: lone.version,
            oldText: "\udc00z",
            newText: "",
          }),
        9,
        "EDIT_TEXT_NOT_FOUND",
      );
    });

    it("two agents editing with the same version: one wins, the other gets VERSION_MISMATCH", async () => {
      const { taskId, version } = await app.planWith("status: todo");
      const results = await Promise.allSettled([
        app
          .client()
          .plans.editPlan({ taskId, expectedVersion: version, oldText: "todo", newText: "doing (A)" }),
        app
          .client()
          .plans.editPlan({ taskId, expectedVersion: version, oldText: "todo", newText: "doing (B)" }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const lost = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      expect((lost?.reason as { code: number }).code).toBe(10);
      expect((await app.plans.getPlan({ taskId })).plan?.content).toMatch(/^status: doing \([AB]\)$/);
    });
  });

  describe("revision versions and RestorePlanRevision", () => {
    it("revision_version is the same in list and get, and changes when a write coalesces into the revision", async () => {
      const { taskId, revisionId } = await app.planWith("one");
      const listed = (await app.plans.listPlanRevisions({ taskId })).revisions[0]?.revisionVersion;
      const got = (await app.plans.getPlanRevision({ taskId, revisionId })).revision?.revisionVersion;
      expect(listed).toBe(got);
      await app.plans.updatePlan({ taskId, content: "two", mode: 2 }); // coalesces into revision 1
      const after = (await app.plans.getPlanRevision({ taskId, revisionId })).revision?.revisionVersion;
      expect(after).not.toBe(got);
    });

    it("restores a revision: marked new revision, never coalesced, events updated/revision.created/reverted", async () => {
      const first = await app.planWith("original");
      const taskId = first.taskId;
      const changed = await app.plans.savePlan({ taskId, content: "changed by a person" });
      const source = (await app.plans.getPlanRevision({ taskId, revisionId: first.revisionId })).revision;
      const restored = await app.plans.restorePlanRevision({
        taskId,
        revisionId: first.revisionId,
        expectedVersion: changed.plan?.version,
        expectedRevisionVersion: source?.revisionVersion,
      });
      expect(restored.status).toBe(RestoreStatus.RESTORE_STATUS_RESTORED);
      expect(restored.revision).toMatchObject({ number: 3, coalesced: false });
      expect(restored.priorRevisionNumber).toBe(2);
      expect((await app.plans.getPlan({ taskId })).plan).toMatchObject({ content: "original", version: 3 });
      const marker = (await app.plans.getPlanRevision({ taskId, revisionId: restored.revision?.id }))
        .revision;
      expect(marker).toMatchObject({ revertOfRevisionId: first.revisionId, authorName: "Agent" });
      expect(app.events.typesFor(taskId).slice(-3)).toEqual([
        "plan.updated",
        "plan.revision.created",
        "plan.reverted",
      ]);
      // The content the restore replaced stays findable through the history alone.
      const listed = await app.plans.listPlanRevisions({ taskId });
      const prior = listed.revisions.find((r) => r.revisionNumber === restored.priorRevisionNumber);
      expect((await app.plans.getPlanRevision({ taskId, revisionId: prior?.id })).revision?.content).toBe(
        "changed by a person",
      );
    });

    it("restoring the revision the plan already equals is ALREADY_CURRENT: no write, same version, no events", async () => {
      const { taskId, version, revisionId } = await app.planWith("same");
      const source = (await app.plans.getPlanRevision({ taskId, revisionId })).revision;
      const before = await planState(app.plans, taskId);
      const events = app.events.published.length;
      const result = await app.plans.restorePlanRevision({
        taskId,
        revisionId,
        expectedVersion: version,
        expectedRevisionVersion: source?.revisionVersion,
      });
      expect(result.status).toBe(RestoreStatus.RESTORE_STATUS_ALREADY_CURRENT);
      expect(result.revision).toBeUndefined();
      expect(result.plan?.version).toBe(version);
      expect(await planState(app.plans, taskId)).toEqual(before);
      expect(app.events.published.length).toBe(events);
    });

    it("rejects, changing nothing: version missing/stale, revision version missing, foreign revision, changed revision", async () => {
      const other = await app.planWith("other task");
      const { taskId, version, revisionId } = await app.planWith("v1");
      const v1 = (await app.plans.getPlanRevision({ taskId, revisionId })).revision?.revisionVersion ?? "";
      const second = await app.plans.savePlan({ taskId, content: "v2" });
      const current = second.plan?.version ?? 0;
      const restore = (fields: Record<string, unknown>) => () =>
        app.plans.restorePlanRevision({
          taskId,
          revisionId,
          expectedVersion: current,
          expectedRevisionVersion: v1,
          ...fields,
        });
      await expectRejected(taskId, restore({ expectedVersion: undefined }), 3, "VERSION_REQUIRED");
      await expectRejected(taskId, restore({ expectedVersion: version }), 10, "VERSION_MISMATCH");
      await expectRejected(taskId, restore({ expectedRevisionVersion: "" }), 3, "REVISION_VERSION_REQUIRED");
      await expectRejected(taskId, restore({ revisionId: other.revisionId }), 5, "REVISION_NOT_FOUND");
      await expectRejected(
        taskId,
        restore({ expectedRevisionVersion: "0".repeat(32) }),
        10,
        "REVISION_CHANGED",
      );
    });

    it("a revision coalesced after it was read is REVISION_CHANGED", async () => {
      const { taskId, revisionId } = await app.planWith("draft");
      const read = (await app.plans.getPlanRevision({ taskId, revisionId })).revision;
      await app.plans.updatePlan({ taskId, content: "more", mode: 2 }); // same agent: coalesces into it
      const current = (await app.plans.getPlan({ taskId })).plan?.version;
      const failure = await expectRejected(
        taskId,
        () =>
          app.plans.restorePlanRevision({
            taskId,
            revisionId,
            expectedVersion: current,
            expectedRevisionVersion: read?.revisionVersion,
          }),
        10,
        "REVISION_CHANGED",
      );
      expect(failure.metadata.next_action).toMatch(/GetPlanRevision/);
    });

    it("a restore racing an editor save is rejected and the save survives", async () => {
      const first = await app.planWith("agent's original");
      const taskId = first.taskId;
      const current = await app.plans.savePlan({ taskId, content: "person's draft" });
      const source = (await app.plans.getPlanRevision({ taskId, revisionId: first.revisionId })).revision;
      const entered = lock.entered;
      const arrived = lock.arrived;
      lock.hold();
      const save = app.plans.savePlan({ taskId, content: "person's newer work" });
      await lock.untilEntered(entered + 1);
      const restore = rpcError(
        app.plans.restorePlanRevision({
          taskId,
          revisionId: first.revisionId,
          expectedVersion: current.plan?.version,
          expectedRevisionVersion: source?.revisionVersion,
        }),
      );
      await lock.untilArrived(arrived + 2);
      lock.open();
      await save;
      expect((await restore).reason).toBe("VERSION_MISMATCH");
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("person's newer work");
    });

    it("restores an oversized historical revision (restores are exempt from the size limit)", async () => {
      const { taskId, revisionId } = await app.planWith("small");
      await app.plans.savePlan({ taskId, content: "later" });
      const big = "b".repeat(LIMIT + 100);
      await execSql(
        app.databaseUrl,
        "UPDATE task_plan_revisions SET content = ?, content_bytes = ?, content_chars = ? WHERE id = ?",
        [big, big.length, big.length, revisionId],
      );
      const source = (await app.plans.getPlanRevision({ taskId, revisionId })).revision;
      const current = (await app.plans.getPlan({ taskId })).plan?.version;
      const restored = await app.plans.restorePlanRevision({
        taskId,
        revisionId,
        expectedVersion: current,
        expectedRevisionVersion: source?.revisionVersion,
      });
      expect(restored.plan?.contentBytes).toBe(LIMIT + 100);
    });

    it("walks the recovery path after an acknowledged reduction using only the history RPCs", async () => {
      const { taskId, version } = await app.planWith(LARGE);
      const reduced = await app.plans.updatePlan({
        taskId,
        content: "- [x] all done",
        expectedVersion: version,
        acknowledgeReduction: true,
      });
      const priorNumber = reduced.truncation?.priorRevisionNumber;
      const page = await app.plans.listPlanRevisions({ taskId });
      const prior = page.revisions.find((r) => r.revisionNumber === priorNumber);
      const snapshot = (await app.plans.getPlanRevision({ taskId, revisionId: prior?.id })).revision;
      expect(snapshot?.content).toBe(LARGE);
      const restored = await app.plans.restorePlanRevision({
        taskId,
        revisionId: snapshot?.id,
        expectedVersion: reduced.plan?.version,
        expectedRevisionVersion: snapshot?.revisionVersion,
      });
      expect(restored.status).toBe(RestoreStatus.RESTORE_STATUS_RESTORED);
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe(LARGE);
    });
  });

  describe("partial reads", () => {
    const doc = "a\r\n猫😀e\u0301\nlast"; // 12 code points

    it("reads code-point ranges with totals, next_offset and has_more", async () => {
      const { taskId } = await app.planWith(doc);
      const whole = await app.plans.getPlan({ taskId });
      expect(whole).toMatchObject({ totalChars: 12, totalBytes: Buffer.byteLength(doc), hasMore: false });
      expect(whole.plan?.content).toBe(doc);
      const first = await app.plans.getPlan({ taskId, offset: 0, limit: 3 });
      expect([first.plan?.content, first.nextOffset, first.hasMore]).toEqual(["a\r\n", 3, true]);
      const middle = await app.plans.getPlan({ taskId, offset: 3, limit: 4 });
      expect([middle.plan?.content, middle.nextOffset]).toEqual(["猫😀e\u0301", 7]);
      const end = await app.plans.getPlan({ taskId, offset: 12 });
      expect([end.plan?.content, end.hasMore, end.nextOffset]).toEqual(["", false, undefined]);
    });

    it("offset past the end is OUT_OF_RANGE; bad limits INVALID_FIELD; a stale expected_version ABORTED", async () => {
      const { taskId, version } = await app.planWith(doc);
      const past = await rpcError(app.plans.getPlan({ taskId, offset: 13 }));
      expect([past.code, past.reason]).toEqual([11, "OFFSET_OUT_OF_RANGE"]);
      const zero = await rpcError(app.plans.getPlan({ taskId, limit: 0 }));
      expect([zero.reason, zero.fieldViolations[0]?.field]).toEqual(["INVALID_FIELD", "limit"]);
      expect((await rpcError(app.plans.getPlan({ taskId, limit: 65_537 }))).reason).toBe("INVALID_FIELD");
      expect((await app.plans.getPlan({ taskId, expectedVersion: version })).plan?.version).toBe(version);
      const stale = await rpcError(app.plans.getPlan({ taskId, expectedVersion: version + 1 }));
      expect([stale.code, stale.reason]).toEqual([10, "VERSION_MISMATCH"]);
    });
  });
});
