import { WriteMode } from "@taskplans/contract";
import { PlanChangeKind } from "@taskplans/contract";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { rpcError } from "../../harness/calls/rpc";
import { execSql } from "../../harness/databases/sql";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";
import { Watcher } from "../../harness/calls/watcher";

const APPEND = WriteMode.WRITE_MODE_APPEND;
const REPLACE = WriteMode.WRITE_MODE_REPLACE;

// Valid UTF-8 that text functions of databases and languages trip over: NUL (SQLite's substr and
// length stop at it), C0 and C1 controls, Unicode White_Space (trimmed by the append rule only at
// the end of the stored text), characters that are not White_Space, CRLF, combining marks,
// astral characters, noncharacters, right-to-left text.
const HOSTILE =
  "a\u0000b \u0001\u001f\u007f\u0080\u0085\u009f\u00a0\u2028\u3000 \u200b\ufeff\r\n" +
  "e\u0301\u0327 \ud83d\ude00 \udbff\udfff \uffff \u05e9\u05dc\u05d5\u05dd \u202e";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");
const chars = (text: string) => [...text].length;

describe.each(DATABASES)("every valid text round-trips exactly ($label)", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, { env: { PLAN_COALESCE_WINDOW_MS: "0" } });
  });
  afterAll(() => app.stop());

  async function expectPlan(taskId: string, content: string) {
    const { plan } = await app.plans.getPlan({ taskId });
    expect(plan?.content).toBe(content);
    expect(plan?.contentBytes).toBe(bytes(content));
    expect(plan?.contentChars).toBe(chars(content));
    return plan?.version ?? 0;
  }

  it("the issue's case: an append after a NUL keeps every byte, and the task stays usable", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "a\u0000b" });
    await app.plans.updatePlan({ taskId, content: "tail", mode: APPEND });
    await expectPlan(taskId, "a\u0000b\n\ntail");
    const revisions = (await app.plans.listPlanRevisions({ taskId })).revisions;
    expect(revisions.map((r) => r.contentBytes)).toEqual([9, 3]);
    const newest = await app.plans.getPlanRevision({ taskId, revisionId: revisions[0]?.id });
    expect(newest.revision?.content).toBe("a\u0000b\n\ntail");
    await app.plans.savePlan({ taskId, content: "saved" });
    await app.plans.deletePlan({ taskId });
    await app.plans.createPlan({ taskId, content: "again" });
    await expectPlan(taskId, "again");
  });

  it("an append to an empty plan is the fragment alone (the property test found SQLite's NULL here)", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "" });
    await app.plans.updatePlan({ taskId, content: "abc", mode: APPEND });
    await expectPlan(taskId, "abc");
    await app.plans.savePlan({ taskId, content: " \u3000\n" }); // only White_Space: trimmed to ""
    await app.plans.updatePlan({ taskId, content: "\u0000", mode: APPEND });
    await expectPlan(taskId, "\u0000");
  });

  it("create, replace, append, editor save, edit, revert and restore keep hostile text byte for byte", async () => {
    const taskId = await app.newTask();
    const expected: string[] = []; // content by version
    const write = async (content: string, call: Promise<{ plan?: { version: number } | undefined }>) => {
      const done = await call;
      expected[done.plan?.version ?? -1] = content;
      expect(await expectPlan(taskId, content)).toBe(done.plan?.version);
    };
    await write(HOSTILE, app.plans.createPlan({ taskId, content: HOSTILE, title: "t\u200b\ufeff\u05e9" }));
    const replaced = `${HOSTILE}\u0000${HOSTILE}`;
    await write(
      replaced,
      app.plans.updatePlan({ taskId, content: replaced, mode: REPLACE, expectedVersion: 1 }),
    );
    // The stored text ends in U+202E (not White_Space): kept whole, then one blank line.
    const appended = `${replaced}\n\n\u0000tail \u3000`;
    await write(appended, app.plans.updatePlan({ taskId, content: "\u0000tail \u3000", mode: APPEND }));
    // Trailing White_Space (U+3000 and the space) goes before the next fragment; NUL is not whitespace.
    const twice = `${appended.slice(0, -2)}\n\n\u0000`;
    await write(twice, app.plans.updatePlan({ taskId, content: "\u0000", mode: APPEND }));
    const saved = `\u0000${HOSTILE}`;
    await write(saved, app.plans.savePlan({ taskId, content: saved }));
    const edited = saved.replace("\u0000b", "\u0000\u0000NUL");
    await write(
      edited,
      app.plans.editPlan({ taskId, oldText: "\u0000b", newText: "\u0000\u0000NUL", expectedVersion: 5 }),
    );
    const revisions = (await app.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions;
    const first = revisions[revisions.length - 1];
    await write(HOSTILE, app.plans.revertPlan({ taskId, revisionId: first?.id }));
    const source = (await app.plans.getPlanRevision({ taskId, revisionId: revisions[0]?.id })).revision;
    expect(source?.content).toBe(edited);
    await write(
      edited,
      app.plans.restorePlanRevision({
        taskId,
        revisionId: source?.id,
        expectedVersion: 7,
        expectedRevisionVersion: source?.revisionVersion,
      }),
    );

    // Every revision, read back whole.
    const all = (await app.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions;
    expect(all).toHaveLength(8);
    for (const meta of all) {
      const { revision } = await app.plans.getPlanRevision({ taskId, revisionId: meta.id });
      expect(revision?.content).toBe(expected[meta.revisionNumber]);
      expect(meta.contentBytes).toBe(bytes(expected[meta.revisionNumber] ?? ""));
      expect(meta.contentChars).toBe(chars(expected[meta.revisionNumber] ?? ""));
    }

    // Partial reads by code points, stitched back together, give the whole text.
    let offset = 0;
    let stitched = "";
    for (;;) {
      const part = await app.plans.getPlan({ taskId, offset, limit: 7 });
      stitched += part.plan?.content ?? "";
      if (!part.hasMore) break;
      offset = part.nextOffset ?? Number.NaN;
    }
    expect(stitched).toBe(edited);

    // WatchPlan replays every version's exact content (appends' rows hold none of their own).
    const watcher = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 0, includeContent: true }));
    const changes = await watcher.received(8);
    watcher.cancel();
    expect(changes.map((c) => c.kind === PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT)).not.toContain(true);
    expect(changes.map((c) => c.plan?.content)).toEqual(expected.slice(1));
    expect(changes[0]?.plan?.title).toBe("t\u200b\ufeff\u05e9");
  });
});

describe.each(DATABASES)(
  "a plan that fails its read check is logged and recoverable ($label)",
  ({ dialect }) => {
    const captured = capturingLogger();
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp(dialect, {
        env: { PLAN_COALESCE_WINDOW_MS: "0", PLAN_LOG_LEVEL: "info" },
        overrides: { logger: captured.logger },
      });
    });
    afterAll(() => app.stop());

    // The HEAD row as a truncated column would leave it: its text shorter than its recorded size.
    async function corrupted(): Promise<{ taskId: string; goodRevisionId: string }> {
      const { taskId, revisionId } = await app.planWith("# Plan\n\nthe good text");
      await app.plans.updatePlan({ taskId, content: "more", mode: APPEND });
      await execSql(app.databaseUrl, "UPDATE task_plans SET content = ? WHERE task_id = ?", ["# Pl", taskId]);
      return { taskId, goodRevisionId: revisionId };
    }

    it("reads and agent writes fail PLAN_READ_FAILED, logged at error level with the task and both sizes", async () => {
      const { taskId } = await corrupted();
      const read = await rpcError(app.plans.getPlan({ taskId }));
      expect([read.code, read.reason]).toEqual([14, "PLAN_READ_FAILED"]);
      expect(read.message).toMatch(/^The stored content could not be read\. .*RevertPlan.*SavePlan/);
      const line = captured.lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find(
          (l) => l.msg === "stored content failed its read check" && l.requestId === read.metadata.request_id,
        );
      expect(line).toMatchObject({
        level: 50,
        taskId,
        row: "plan",
        recordedBytes: bytes("# Plan\n\nthe good text\n\nmore"),
        storedBytes: 4,
      });
      // AC-TASKS-PLAN-APPEND-003.5 keeps its meaning and its text for an append.
      const append = await rpcError(app.plans.updatePlan({ taskId, content: "x", mode: APPEND }));
      expect([append.code, append.reason]).toEqual([14, "PLAN_READ_FAILED"]);
      expect(append.message).toMatch(
        /^Plan was not changed because the stored plan could not be read, so the append/,
      );
      const replace = await rpcError(
        app.plans.updatePlan({ taskId, content: "x", mode: REPLACE, expectedVersion: 2 }),
      );
      expect(replace.message).toMatch(
        /^Plan was not changed because the stored plan could not be read, so the write/,
      );
      // Nothing changed: same version and revisions, the same unreadable text.
      const [row] = (await execSql(
        app.databaseUrl,
        "SELECT version, content FROM task_plans WHERE task_id = ?",
        [taskId],
      )) as { version: number | string; content: string }[];
      expect([Number(row?.version), row?.content]).toEqual([2, "# Pl"]);
      expect((await app.plans.listPlanRevisions({ taskId })).revisions).toHaveLength(2);
    });

    it("RevertPlan to a good revision recovers the task", async () => {
      const { taskId, goodRevisionId } = await corrupted();
      await app.plans.revertPlan({ taskId, revisionId: goodRevisionId });
      const { plan } = await app.plans.getPlan({ taskId });
      expect([plan?.content, plan?.version]).toEqual(["# Plan\n\nthe good text", 3]);
      await app.plans.updatePlan({ taskId, content: "after", mode: APPEND });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("# Plan\n\nthe good text\n\nafter");
    });

    it("an editor save of the whole document recovers the task; a delete clears it", async () => {
      const { taskId } = await corrupted();
      await app.plans.savePlan({ taskId, content: "# Plan\n\nrewritten" });
      await app.plans.updatePlan({ taskId, content: "after", mode: APPEND });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("# Plan\n\nrewritten\n\nafter");

      const other = await corrupted();
      await app.plans.deletePlan({ taskId: other.taskId });
      await app.plans.createPlan({ taskId: other.taskId, content: "new" });
      expect((await app.plans.getPlan({ taskId: other.taskId })).plan?.content).toBe("new");
    });
  },
);
