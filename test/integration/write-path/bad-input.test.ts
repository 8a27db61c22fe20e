import { Metadata } from "@grpc/grpc-js";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { expectRejected as rejectedWithoutChange } from "../../harness/calls/expect-rejected";
import { encodePageToken } from "../../../src/plans/rules/page-token";
import { DATABASES, randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

const LIMIT = 262_144;

describe.each(DATABASES)(
  "bad input gets its documented error and changes nothing, on $label",
  ({ dialect }) => {
    let app: TestApp;
    let taskId: string;
    let otherTaskId: string;
    let otherRevisionId: string;

    beforeAll(async () => {
      app = await startTestApp(dialect);
    });
    afterAll(() => app.stop());

    beforeEach(async () => {
      taskId = await app.newTask();
      await app.plans.savePlan({ taskId, content: "# Plan\nkeep this\n", title: "Kept" });
      otherTaskId = await app.newTask();
      otherRevisionId =
        (await app.plans.savePlan({ taskId: otherTaskId, content: "other" })).revision?.id ?? "";
    });

    const expectRejected = (call: () => Promise<unknown>, code: number, reason: string, field?: string) =>
      rejectedWithoutChange(app, taskId, call, { code, reason, field, write: false });

    it("empty task id: INVALID_ARGUMENT INVALID_FIELD naming task_id", async () => {
      await expectRejected(
        () => app.plans.savePlan({ taskId: "", content: "x" }),
        3,
        "INVALID_FIELD",
        "task_id",
      );
      await expectRejected(() => app.plans.getPlan({ taskId: "" }), 3, "INVALID_FIELD", "task_id");
      await expectRejected(() => app.plans.listPlanRevisions({ taskId: "" }), 3, "INVALID_FIELD", "task_id");
    });

    it("unknown task: NOT_FOUND TASK_NOT_FOUND for reads and writes", async () => {
      const missing = randomId("missing");
      await expectRejected(() => app.plans.savePlan({ taskId: missing, content: "x" }), 5, "TASK_NOT_FOUND");
      await expectRejected(
        () => app.plans.createPlan({ taskId: missing, content: "x" }),
        5,
        "TASK_NOT_FOUND",
      );
      await expectRejected(() => app.plans.getPlan({ taskId: missing }), 5, "TASK_NOT_FOUND");
    });

    it("an unknown task is NOT_FOUND before an oversized content is measured", async () => {
      const failure = await rpcError(
        app.plans.savePlan({ taskId: randomId("missing"), content: "x".repeat(LIMIT + 1) }),
      );
      expect(failure.reason).toBe("TASK_NOT_FOUND");
    });

    it("content one byte over the limit: FAILED_PRECONDITION PLAN_TOO_LARGE with size_bytes and limit_bytes", async () => {
      const failure = await expectRejected(
        () => app.plans.savePlan({ taskId, content: "x".repeat(LIMIT + 1) }),
        9,
        "PLAN_TOO_LARGE",
      );
      expect(failure.metadata).toMatchObject({ size_bytes: String(LIMIT + 1), limit_bytes: String(LIMIT) });
      expect(failure.message).toMatch(/^Plan was not changed because/);
    });

    it("the limit counts UTF-8 bytes: 65,536 four-byte emoji fit exactly, one more byte does not", async () => {
      const exact = "😀".repeat(LIMIT / 4);
      const written = await app.plans.savePlan({ taskId, content: exact });
      expect(written.plan?.contentBytes).toBe(LIMIT);
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe(exact);
      await expectRejected(() => app.plans.savePlan({ taskId, content: `${exact}a` }), 9, "PLAN_TOO_LARGE");
    });

    it("a create over the limit stores nothing", async () => {
      const fresh = await app.newTask();
      const failure = await rpcError(app.plans.createPlan({ taskId: fresh, content: "x".repeat(LIMIT + 1) }));
      expect(failure.reason).toBe("PLAN_TOO_LARGE");
      expect(await planState(app.plans, fresh)).toEqual({ plan: null, revisions: [] });
    });

    it("invalid enum numbers: write mode 7 is INVALID_WRITE_MODE, author kind 9 is INVALID_FIELD author.kind", async () => {
      const plan = (await app.plans.getPlan({ taskId })).plan;
      await expectRejected(
        () =>
          app.plans.updatePlan({ taskId, content: "x", mode: 7 as never, expectedVersion: plan?.version }),
        3,
        "INVALID_WRITE_MODE",
      );
      await expectRejected(
        () => app.plans.savePlan({ taskId, content: "x", author: { kind: 9 as never, name: "n" } }),
        3,
        "INVALID_FIELD",
        "author.kind",
      );
    });

    it("a revision of another task: NOT_FOUND REVISION_NOT_FOUND for get and revert", async () => {
      await expectRejected(
        () => app.plans.getPlanRevision({ taskId, revisionId: otherRevisionId }),
        5,
        "REVISION_NOT_FOUND",
      );
      await expectRejected(
        () => app.plans.revertPlan({ taskId, revisionId: otherRevisionId }),
        5,
        "REVISION_NOT_FOUND",
      );
      await expectRejected(
        () => app.plans.revertPlan({ taskId, revisionId: "" }),
        3,
        "INVALID_FIELD",
        "revision_id",
      );
    });

    it("page_size out of range and bad page tokens: INVALID_FIELD naming the field", async () => {
      await expectRejected(
        () => app.plans.listPlanRevisions({ taskId, pageSize: -1 }),
        3,
        "INVALID_FIELD",
        "page_size",
      );
      await expectRejected(
        () => app.plans.listPlanRevisions({ taskId, pageToken: "%%%" }),
        3,
        "INVALID_FIELD",
        "page_token",
      );
      const foreign = encodePageToken(otherTaskId, 5);
      await expectRejected(
        () => app.plans.listPlanRevisions({ taskId, pageToken: foreign }),
        3,
        "INVALID_FIELD",
        "page_token",
      );
    });

    it("oversized title and author name: INVALID_FIELD naming the field", async () => {
      await expectRejected(
        () => app.plans.savePlan({ taskId, content: "x", title: "t".repeat(1001) }),
        3,
        "INVALID_FIELD",
        "title",
      );
      await expectRejected(
        () => app.plans.savePlan({ taskId, content: "x", author: { name: "n".repeat(201) } }),
        3,
        "INVALID_FIELD",
        "author.name",
      );
    });

    it("titles with control characters or separators (NUL, ESC, U+0085, U+2028): INVALID_FIELD, nothing stored", async () => {
      for (const title of ["a\0b", "a\x1b[31mb", "a\u0085b", "a\u2028b", "a\u2029b"]) {
        await expectRejected(
          () => app.plans.savePlan({ taskId, content: "x", title }),
          3,
          "INVALID_FIELD",
          "title",
        );
        const created = randomId("task");
        const failure = await rpcError(app.tasks.createTask({ taskId: created, workspaceId: "ws-1", title }));
        expect([failure.code, failure.reason]).toEqual([3, "INVALID_FIELD"]);
        expect((await rpcError(app.tasks.getTask({ taskId: created }))).reason).toBe("TASK_NOT_FOUND");
      }
    });

    it("the request id from x-request-id metadata comes back in the error details", async () => {
      const metadata = new Metadata();
      metadata.set("x-request-id", "trace-123");
      const failure = await rpcError(app.plans.getPlan({ taskId: "" }, { metadata }));
      expect(failure.metadata.request_id).toBe("trace-123");
    });
  },
);
