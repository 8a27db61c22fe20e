import { WriteMode } from "@taskplans/contract";
import { GatedLock } from "../../harness/fixtures/gated-lock";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { expectRejected as rejectedWithoutChange } from "../../harness/calls/expect-rejected";
import { execSql } from "../../harness/databases/sql";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const LIMIT = 262_144;
const APPEND = WriteMode.WRITE_MODE_APPEND;
const REPLACE = WriteMode.WRITE_MODE_REPLACE;

// The rules run over gRPC on both databases, and once more over Connect JSON on the HTTP listener
// (the transport switch of test-app.ts), so the two doors cannot drift.
const RUNS = [
  ...DATABASES.map((database) => ({ ...database, transport: "grpc" as const })),
  { label: "SQLite over Connect JSON (HTTP)", dialect: "sqlite" as const, transport: "connect" as const },
];

describe.each(RUNS)("append mode (REQ-TASKS-PLAN-APPEND) on $label", ({ dialect, transport }) => {
  let app: TestApp;
  let lock: GatedLock;
  beforeAll(async () => {
    lock = new GatedLock();
    app = await startTestApp(dialect, { overrides: { lock }, transport });
  });
  afterAll(() => app.stop());

  const expectRejected = (taskId: string, call: () => Promise<unknown>, code: number, reason: string) =>
    rejectedWithoutChange(app, taskId, call, { code, reason });

  describe("composition in the database (the stored plan is not read for an append)", () => {
    it("records the content's trimmed lengths at every write, and an append keeps them exact", async () => {
      const { taskId } = await app.planWith("# Plan \u3000\n\u0085");
      await app.plans.updatePlan({ taskId, content: "\n\n## F😀\u2028", mode: APPEND });
      const content = (await app.plans.getPlan({ taskId })).plan?.content;
      expect(content).toBe("# Plan\n\n## F😀\u2028");
      const rows = (await execSql(
        app.databaseUrl,
        "SELECT content_trimmed_chars AS c, content_trimmed_bytes AS b FROM task_plans WHERE task_id = ?",
        [taskId],
      )) as { c: number; b: number }[];
      const trimmed = "# Plan\n\n## F😀";
      expect(rows.map((r) => [Number(r.c), Number(r.b)])).toEqual([
        [[...trimmed].length, Buffer.byteLength(trimmed)],
      ]);
    });

    it("appends to a plan written before the lengths were recorded by reading it once, then records them", async () => {
      const { taskId } = await app.planWith("legacy plan\u3000\n");
      await execSql(
        app.databaseUrl,
        "UPDATE task_plans SET content_trimmed_chars = NULL, content_trimmed_bytes = NULL WHERE task_id = ?",
        [taskId],
      );
      await app.plans.updatePlan({ taskId, content: "## F", mode: APPEND });
      await app.plans.updatePlan({ taskId, content: "## G\n", mode: APPEND });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("legacy plan\n\n## F\n\n## G\n");
      const rows = (await execSql(
        app.databaseUrl,
        "SELECT content_trimmed_chars AS c FROM task_plans WHERE task_id = ?",
        [taskId],
      )) as { c: number }[];
      expect(Number(rows[0]?.c)).toBe("legacy plan\n\n## F\n\n## G".length);
      // The revision holds what HEAD holds (copied by the database).
      const [newest] = (await app.plans.listPlanRevisions({ taskId })).revisions;
      const revision = await app.plans.getPlanRevision({ taskId, revisionId: newest?.id ?? "" });
      expect(revision.revision?.content).toBe("legacy plan\n\n## F\n\n## G\n");
    });
  });

  describe("REQ-001 mode selection", () => {
    it("AC-TASKS-PLAN-APPEND-001.1: an unspecified mode is replace (and so needs the version)", async () => {
      const { taskId, version } = await app.planWith("old");
      await app.plans.updatePlan({ taskId, content: "whole new", expectedVersion: version });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("whole new");
      await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: "x" }),
        3,
        "VERSION_REQUIRED",
      );
    });

    it("AC-TASKS-PLAN-APPEND-001.2: replace and append do what they say", async () => {
      const { taskId, version } = await app.planWith("old");
      const replaced = await app.plans.updatePlan({
        taskId,
        content: "new",
        mode: REPLACE,
        expectedVersion: version,
      });
      expect(replaced.plan?.contentBytes).toBe(3);
      await app.plans.updatePlan({ taskId, content: "## more", mode: APPEND });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("new\n\n## more");
    });

    it.each([3, 7, -1])(
      "AC-TASKS-PLAN-APPEND-001.3: mode %d is INVALID_WRITE_MODE naming both values",
      async (mode) => {
        const { taskId } = await app.planWith("keep");
        const failure = await expectRejected(
          taskId,
          () => app.plans.updatePlan({ taskId, content: "x", mode: mode as WriteMode }),
          3,
          "INVALID_WRITE_MODE",
        );
        expect(failure.message).toContain('"replace"');
        expect(failure.message).toContain('"append"');
      },
    );

    it("AC-TASKS-PLAN-APPEND-001.4: empty content is CONTENT_REQUIRED in either mode", async () => {
      const { taskId, version } = await app.planWith("keep");
      await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: "", mode: APPEND }),
        3,
        "CONTENT_REQUIRED",
      );
      await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: "", mode: REPLACE, expectedVersion: version }),
        3,
        "CONTENT_REQUIRED",
      );
    });

    it.each([
      ["spaces and newlines", " \n\t\r\n "],
      ["U+00A0 and U+0085 only", "\u00a0\u0085"],
      ["U+2028 and U+3000 only", "\u2028\u3000\n"],
    ])("AC-TASKS-PLAN-APPEND-001.5: a fragment of %s is FRAGMENT_BLANK", async (_name, fragment) => {
      const { taskId } = await app.planWith("keep");
      await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: fragment, mode: APPEND }),
        3,
        "FRAGMENT_BLANK",
      );
    });

    it.each([
      ["U+200B", "\u200b"],
      ["U+FEFF", "\ufeff"],
    ])(
      "AC-TASKS-PLAN-APPEND-001.5: a fragment of only %s is not blank and is appended",
      async (_name, fragment) => {
        const { taskId } = await app.planWith("keep");
        await app.plans.updatePlan({ taskId, content: fragment, mode: APPEND });
        expect((await app.plans.getPlan({ taskId })).plan?.content).toBe(`keep\n\n${fragment}`);
      },
    );

    it("AC-TASKS-PLAN-APPEND-001.6: append to a task without a plan is the same PLAN_NOT_FOUND as replace; no plan is created", async () => {
      const taskId = await app.newTask();
      const append = await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: "x", mode: APPEND }),
        5,
        "PLAN_NOT_FOUND",
      );
      const replace = await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: "x", mode: REPLACE, expectedVersion: 1 }),
        5,
        "PLAN_NOT_FOUND",
      );
      expect(append.message).toBe(replace.message);
      expect((await planState(app.plans, taskId)).plan).toBeNull();
    });

    it("AC-TASKS-PLAN-APPEND-001.7: one failure, in order mode -> content -> plan existence -> size", async () => {
      const taskId = await app.newTask(); // no plan
      const huge = "x".repeat(LIMIT + 1);
      expect(
        (await rpcError(app.plans.updatePlan({ taskId, content: "", mode: 9 as WriteMode }))).reason,
      ).toBe("INVALID_WRITE_MODE");
      expect((await rpcError(app.plans.updatePlan({ taskId, content: "", mode: APPEND }))).reason).toBe(
        "CONTENT_REQUIRED",
      );
      expect((await rpcError(app.plans.updatePlan({ taskId, content: " \n", mode: APPEND }))).reason).toBe(
        "FRAGMENT_BLANK",
      );
      expect((await rpcError(app.plans.updatePlan({ taskId, content: huge, mode: APPEND }))).reason).toBe(
        "PLAN_NOT_FOUND",
      );
      expect((await planState(app.plans, taskId)).plan).toBeNull();
    });
  });

  describe("REQ-002 composition", () => {
    it.each([
      ["no trailing newline", "previous", "## New", "previous\n\n## New"],
      ["several trailing newlines", "previous\n\n\n", "\n\n## New\n", "previous\n\n## New\n"],
      ["CRLF on both sides", "previous\r\n\r\n", "\r\n \r\n## New\r\n", "previous\n\n## New\r\n"],
      ["an indented first line", "previous\n", " \n    code", "previous\n\n    code"],
    ])(
      "AC-TASKS-PLAN-APPEND-002.2/002.4/006.6: %s (the acknowledgement reports the stored size)",
      async (_name, stored, fragment, composed) => {
        const { taskId } = await app.planWith(stored);
        const written = await app.plans.updatePlan({ taskId, content: fragment, mode: APPEND });
        expect((await app.plans.getPlan({ taskId })).plan?.content).toBe(composed);
        expect(written.plan?.contentBytes).toBe(Buffer.byteLength(composed));
      },
    );

    it("AC-TASKS-PLAN-APPEND-002.3: onto a whitespace-only plan the fragment starts the document", async () => {
      const taskId = await app.newTask();
      await app.plans.savePlan({ taskId, content: " \n\u00a0\n" });
      await app.plans.updatePlan({ taskId, content: "\n\n  ## First", mode: APPEND });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("  ## First");
    });

    it("AC-TASKS-PLAN-APPEND-002.6: a given title is applied, an absent title keeps the stored one", async () => {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "a", title: "Stored" });
      await app.plans.updatePlan({ taskId, content: "b", mode: APPEND });
      expect((await app.plans.getPlan({ taskId })).plan?.title).toBe("Stored");
      await app.plans.updatePlan({ taskId, content: "c", mode: APPEND, title: "Renamed" });
      expect((await app.plans.getPlan({ taskId })).plan).toMatchObject({
        title: "Renamed",
        content: "a\n\nb\n\nc",
      });
    });
  });

  describe("REQ-003 serialization and failure", () => {
    async function overlapped(first: () => Promise<unknown>, second: () => Promise<unknown>) {
      const entered = lock.entered;
      const arrived = lock.arrived;
      lock.hold();
      const a = first().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      await lock.untilEntered(entered + 1); // the first write holds the lock, inside the region
      const b = second().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      await lock.untilArrived(arrived + 2); // the second is queued on the same task's lock
      lock.open();
      return Promise.all([a, b]);
    }

    it("AC-TASKS-PLAN-APPEND-003.1/003.2: two overlapping appends both land in full", async () => {
      const { taskId } = await app.planWith("base");
      const [a, b] = await overlapped(
        () => app.plans.updatePlan({ taskId, content: "## A", mode: APPEND }),
        () => app.plans.updatePlan({ taskId, content: "## B", mode: APPEND }),
      );
      expect([a.ok, b.ok]).toEqual([true, true]);
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\n## A\n\n## B");
    });

    it("AC-TASKS-PLAN-APPEND-003.3/003.4: append racing an editor replace ends in one of the two serial outcomes", async () => {
      for (const replaceFirst of [true, false]) {
        const { taskId } = await app.planWith("pre-replace");
        const replace = () => app.plans.savePlan({ taskId, content: "REPLACED" });
        const append = () => app.plans.updatePlan({ taskId, content: "## F", mode: APPEND });
        const results = await (replaceFirst ? overlapped(replace, append) : overlapped(append, replace));
        expect(results.every((r) => r.ok)).toBe(true);
        const content = (await app.plans.getPlan({ taskId })).plan?.content;
        expect(content).toBe(replaceFirst ? "REPLACED\n\n## F" : "REPLACED");
        expect(content).not.toBe("pre-replace\n\n## F");
      }
    });

    it("AC-TASKS-PLAN-APPEND-003.4: append racing a versioned agent replace: never the pre-replace content plus the fragment", async () => {
      for (const replaceFirst of [true, false]) {
        const { taskId, version } = await app.planWith("pre-replace");
        const replace = () => app.plans.updatePlan({ taskId, content: "REPLACED", expectedVersion: version });
        const append = () => app.plans.updatePlan({ taskId, content: "## F", mode: APPEND });
        const [first, second] = await (replaceFirst
          ? overlapped(replace, append)
          : overlapped(append, replace));
        const content = (await app.plans.getPlan({ taskId })).plan?.content;
        if (replaceFirst) {
          expect([first.ok, second.ok]).toEqual([true, true]);
          expect(content).toBe("REPLACED\n\n## F");
        } else {
          // The append committed first, so the replace's version is stale: it is rejected, not lost-updated.
          expect([first.ok, second.ok]).toEqual([true, false]);
          expect(content).toBe("pre-replace\n\n## F");
        }
      }
    });

    it("AC-TASKS-PLAN-APPEND-003.5: an unreadable stored plan fails the append with UNAVAILABLE PLAN_READ_FAILED and changes nothing", async () => {
      const { taskId } = await app.planWith("the stored plan\n");
      const before = await planState(app.plans, taskId);
      // Corrupt the HEAD row the way a truncated column would: its recorded size no longer matches.
      await execSql(
        app.databaseUrl,
        "UPDATE task_plans SET content_bytes = content_bytes + 7 WHERE task_id = ?",
        [taskId],
      );
      const failure = await rpcError(app.plans.updatePlan({ taskId, content: "## F", mode: APPEND }));
      expect([failure.code, failure.reason]).toEqual([14, "PLAN_READ_FAILED"]);
      expect(failure.message).toMatch(/^Plan was not changed because the stored plan could not be read/);
      expect(failure.message).not.toMatch(/content_bytes|task_plans|SQL|size/i);
      const rows = (await execSql(
        app.databaseUrl,
        "SELECT content, version FROM task_plans WHERE task_id = ?",
        [taskId],
      )) as {
        content: string;
        version: number;
      }[];
      expect(rows[0]?.content).toBe("the stored plan\n");
      expect(Number(rows[0]?.version)).toBe(before.plan?.version);
      await execSql(
        app.databaseUrl,
        "UPDATE task_plans SET content_bytes = content_bytes - 7 WHERE task_id = ?",
        [taskId],
      );
      expect(await planState(app.plans, taskId)).toEqual(before);
    });

    it("AC-TASKS-PLAN-APPEND-001.7: an unreadable stored plan is reported before the size limit and a stale version", async () => {
      const { taskId, version } = await app.planWith("a".repeat(LIMIT - 10));
      const before = await planState(app.plans, taskId);
      const corrupt = (delta: number) =>
        execSql(
          app.databaseUrl,
          "UPDATE task_plans SET content_bytes = content_bytes + ? WHERE task_id = ?",
          [delta, taskId],
        );
      // Before the corruption, the append would be too large.
      const tooLarge = await rpcError(
        app.plans.updatePlan({ taskId, content: "b".repeat(20), mode: APPEND }),
      );
      expect(tooLarge.reason).toBe("PLAN_TOO_LARGE");
      await corrupt(3);
      for (const request of [
        { content: "b".repeat(20) }, // too large as well
        { content: "b", expectedVersion: version + 5 }, // a stale version as well
      ]) {
        const failure = await rpcError(app.plans.updatePlan({ taskId, mode: APPEND, ...request }));
        expect([failure.code, failure.reason]).toEqual([14, "PLAN_READ_FAILED"]);
      }
      await corrupt(-3);
      expect(await planState(app.plans, taskId)).toEqual(before);
    });

    it("AC-TASKS-PLAN-APPEND-003.6: the same append twice appends twice", async () => {
      const { taskId } = await app.planWith("base");
      await app.plans.updatePlan({ taskId, content: "- again", mode: APPEND });
      await app.plans.updatePlan({ taskId, content: "- again", mode: APPEND });
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("base\n\n- again\n\n- again");
    });
  });

  describe("REQ-004/005 guard and unchanged surfaces", () => {
    const large = `# Plan\n${"detail line\n".repeat(400)}`; // 4,807 code points

    it("AC-TASKS-PLAN-APPEND-004.1/004.3: a small append onto a large plan has no truncation field", async () => {
      const { taskId } = await app.planWith(large);
      const written = await app.plans.updatePlan({ taskId, content: "- tiny", mode: APPEND });
      expect(written.truncation).toBeUndefined();
    });

    it("AC-TASKS-PLAN-APPEND-004.2/005.5: an append coalesces like a replace and the revision holds the composed content", async () => {
      const { taskId } = await app.planWith(large);
      const written = await app.plans.updatePlan({ taskId, content: "- tiny", mode: APPEND });
      expect(written.revision).toMatchObject({ number: 1, coalesced: true });
      const revision = (await app.plans.getPlanRevision({ taskId, revisionId: written.revision?.id }))
        .revision;
      expect(revision?.content).toBe(`${large.trimEnd()}\n\n- tiny`);
      expect((await planState(app.plans, taskId)).revisions).toHaveLength(1);
    });

    it("AC-TASKS-PLAN-APPEND-005.4: an append emits the same events in the same order as a replace of the same result", async () => {
      const viaAppend = await app.planWith("base");
      await app.plans.updatePlan({ taskId: viaAppend.taskId, content: "x", mode: APPEND });
      const viaReplace = await app.planWith("base");
      await app.plans.updatePlan({
        taskId: viaReplace.taskId,
        content: "base\n\nx",
        expectedVersion: viaReplace.version,
      });
      const shape = (taskId: string) =>
        app.events
          .eventsFor(taskId)
          .map((e) => (e.type === "plan.revision.created" ? `${e.type}:${e.coalesced}` : e.type));
      expect(shape(viaAppend.taskId)).toEqual(shape(viaReplace.taskId));
      expect(shape(viaAppend.taskId)).toEqual([
        "plan.created",
        "plan.revision.created:false",
        "plan.updated",
        "plan.revision.created:true",
      ]);
    });

    it("AC-TASKS-PLAN-APPEND-005.2: CreatePlan with a mode is INVALID_WRITE_MODE naming UpdatePlan with append; nothing stored", async () => {
      const taskId = await app.newTask();
      const failure = await expectRejected(
        taskId,
        () => app.plans.createPlan({ taskId, content: "fragment", mode: APPEND }),
        3,
        "INVALID_WRITE_MODE",
      );
      expect(failure.message).toContain("UpdatePlan");
      expect(failure.message).toContain("APPEND");
      await expectRejected(
        taskId,
        () => app.plans.createPlan({ taskId, content: "x", mode: REPLACE }),
        3,
        "INVALID_WRITE_MODE",
      );
    });
  });

  describe("REQ-007 size of the composed document", () => {
    it("AC-TASKS-PLAN-APPEND-007.1/007.2/007.3: a small fragment whose composition exceeds the limit is rejected reporting the composed size", async () => {
      const { taskId } = await app.planWith("a".repeat(LIMIT - 10));
      const failure = await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: "0123456789", mode: APPEND }),
        9,
        "PLAN_TOO_LARGE",
      );
      expect(failure.metadata).toMatchObject({ size_bytes: String(LIMIT + 2), limit_bytes: String(LIMIT) });
    });

    it("AC-TASKS-PLAN-APPEND-007.2: a composition of exactly the limit is accepted", async () => {
      const { taskId } = await app.planWith("a".repeat(LIMIT - 12));
      const written = await app.plans.updatePlan({ taskId, content: "0123456789", mode: APPEND });
      expect(written.plan?.contentBytes).toBe(LIMIT);
    });

    it("AC-TASKS-PLAN-APPEND-007.3: a fragment alone over the limit reports the composed size, not the fragment's", async () => {
      const { taskId } = await app.planWith("abc");
      const failure = await expectRejected(
        taskId,
        () => app.plans.updatePlan({ taskId, content: "f".repeat(LIMIT + 5), mode: APPEND }),
        9,
        "PLAN_TOO_LARGE",
      );
      expect(failure.metadata.size_bytes).toBe(String(3 + 2 + LIMIT + 5));
    });

    it("AC-TASKS-PLAN-APPEND-007.4: the size admitted is measured inside the serialized region, after a concurrent append", async () => {
      // Each fragment fits alone onto the plan both writers saw; only the second composition is too big.
      const { taskId } = await app.planWith("a".repeat(LIMIT - 30));
      const entered = lock.entered;
      const arrived = lock.arrived;
      lock.hold();
      const first = app.plans.updatePlan({ taskId, content: "b".repeat(20), mode: APPEND });
      await lock.untilEntered(entered + 1);
      const second = rpcError(app.plans.updatePlan({ taskId, content: "c".repeat(20), mode: APPEND }));
      await lock.untilArrived(arrived + 2);
      lock.open();
      expect((await first).plan?.contentBytes).toBe(LIMIT - 30 + 22);
      const failure = await second;
      expect(failure.reason).toBe("PLAN_TOO_LARGE");
      expect(failure.metadata.size_bytes).toBe(String(LIMIT - 30 + 22 + 22));
    });

    it("AC-TASKS-PLAN-APPEND-007.5: an oversized replace is rejected before the lock, with the same error", async () => {
      const { taskId, version } = await app.planWith("keep");
      lock.hold();
      const arrived = lock.arrived;
      try {
        const failure = await expectRejected(
          taskId,
          () => app.plans.updatePlan({ taskId, content: "r".repeat(LIMIT + 1), expectedVersion: version }),
          9,
          "PLAN_TOO_LARGE",
        );
        expect(failure.metadata.size_bytes).toBe(String(LIMIT + 1));
        expect(lock.arrived).toBe(arrived); // never queued for the lock
      } finally {
        lock.open();
      }
    });
  });
});
