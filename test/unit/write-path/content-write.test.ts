import { reasonOf as reason } from "../../harness/fixtures/reason-of";
import type { ContentWrite } from "../../../src/plans/writes/content-decision";
import { contentCommit, decideContentWrite, type TestState } from "../../harness/model/decide-content";
import { PlanError } from "../../../src/plans/errors";
import type { WriteEnv } from "../../../src/plans/pipeline/write-command";
import type { HeadRecord, RevisionRecord } from "../../../src/plans/ports/records";
import { headRecord, revisionRecord, checklistEnv } from "../../harness/fixtures/records";

const now = new Date("2026-11-29T12:00:00.000Z");
const env: WriteEnv = {
  now,
  coalesceWindowMs: 300_000,
  historyBudget: { maxRevisions: 0, maxBytes: 0 },
  newId: () => "new-id",
  ...checklistEnv,
};
const agent = { kind: "agent" as const, name: "Agent" };

function stateWith(content: string | null, options: { version?: number; deleted?: boolean } = {}): TestState {
  if (content === null) return { taskId: "t", head: null, latest: null };
  const head: HeadRecord = headRecord(content, {
    version: options.version ?? 5,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    latestRevisionNumber: 3,
    deleted: options.deleted ?? false,
  });
  const before = new Date(now.getTime() - 1000);
  const latest: RevisionRecord = revisionRecord(content, {
    id: "r3",
    number: 3,
    createdAt: before,
    updatedAt: before,
  });
  return { taskId: "t", head, latest };
}

function write(overrides: Partial<ContentWrite>): ContentWrite {
  return {
    path: "agent-update",
    mode: "replace",
    title: undefined,
    content: "new",
    expectedVersion: undefined,
    acknowledgeReduction: false,
    author: agent,
    ...overrides,
  };
}

describe("version rules (seed 003)", () => {
  it.each([
    ["agent replace without a version", write({}), stateWith("x"), "VERSION_REQUIRED"],
    ["agent replace with a stale version", write({ expectedVersion: 4 }), stateWith("x"), "VERSION_MISMATCH"],
    ["agent replace with the current version", write({ expectedVersion: 5 }), stateWith("x"), "ok"],
    ["agent append without a version", write({ mode: "append" }), stateWith("x"), "ok"],
    [
      "agent append with a stale version",
      write({ mode: "append", expectedVersion: 4 }),
      stateWith("x"),
      "VERSION_MISMATCH",
    ],
    ["agent update of a missing plan", write({ expectedVersion: 5 }), stateWith(null), "PLAN_NOT_FOUND"],
    [
      "agent update of a deleted plan",
      write({ mode: "append" }),
      stateWith("", { deleted: true }),
      "PLAN_NOT_FOUND",
    ],
    ["agent create without a plan", write({ path: "agent-create" }), stateWith(null), "ok"],
    [
      "agent create with a version and no plan",
      write({ path: "agent-create", expectedVersion: 5 }),
      stateWith(null),
      "VERSION_MISMATCH",
    ],
    [
      "agent create over a plan without a version",
      write({ path: "agent-create" }),
      stateWith("x"),
      "PLAN_EXISTS",
    ],
    [
      "agent create over a plan with a stale version",
      write({ path: "agent-create", expectedVersion: 1 }),
      stateWith("x"),
      "VERSION_MISMATCH",
    ],
    [
      "agent create over a plan with the current version",
      write({ path: "agent-create", expectedVersion: 5 }),
      stateWith("x"),
      "ok",
    ],
    ["agent create after a delete", write({ path: "agent-create" }), stateWith("", { deleted: true }), "ok"],
    [
      "editor save never checks versions",
      write({ path: "editor-save", expectedVersion: 1 }),
      stateWith("x"),
      "ok",
    ],
  ])("%s -> %s", (_name, request, state, expected) => {
    expect(reason(() => decideContentWrite(request, state, env))).toBe(expected);
  });

  it("a new version is the stored version + 1, also after a delete (tombstone)", async () => {
    expect(
      contentCommit(await decideContentWrite(write({ expectedVersion: 5 }), stateWith("x"), env)).head
        .version,
    ).toBe(6);
    const recreated = await decideContentWrite(
      write({ path: "agent-create" }),
      stateWith("", { version: 9, deleted: true }),
      env,
    );
    expect(contentCommit(recreated).head.version).toBe(10);
  });
});

describe("reduction guard (agent replace only)", () => {
  const big = "x".repeat(4000);
  it("rejects an unacknowledged reduction below half of at least 2,000 code points", () => {
    expect(
      reason(() => decideContentWrite(write({ expectedVersion: 5, content: "short" }), stateWith(big), env)),
    ).toBe("REDUCTION_NOT_ACKNOWLEDGED");
  });
  it("stores an acknowledged reduction on a forced new revision and reports the revision holding the prior content", async () => {
    const decision = await decideContentWrite(
      write({ expectedVersion: 5, content: "short", acknowledgeReduction: true }),
      stateWith(big),
      env,
    );
    expect(decision.result.truncation).toEqual({ priorChars: 4000, newChars: 5, priorRevisionNumber: 3 });
    expect(contentCommit(decision).coalesces).toBeNull();
    expect(contentCommit(decision).revision.number).toBe(4);
  });
  it("does not judge exactly half, a create over nothing, an editor save, or an append", () => {
    expect(
      reason(() =>
        decideContentWrite(write({ expectedVersion: 5, content: "y".repeat(2000) }), stateWith(big), env),
      ),
    ).toBe("ok");
    expect(
      reason(() => decideContentWrite(write({ path: "editor-save", content: "s" }), stateWith(big), env)),
    ).toBe("ok");
    expect(
      reason(() => decideContentWrite(write({ mode: "append", content: "s" }), stateWith(big), env)),
    ).toBe("ok");
  });
  it("AC-TASKS-PLAN-APPEND-004.2: an append stays eligible for coalescing and carries no truncation", async () => {
    const decision = await decideContentWrite(write({ mode: "append", content: "s" }), stateWith(big), env);
    expect(decision.result.truncation).toBeNull();
    expect(contentCommit(decision).coalesces).toEqual({ rowVersion: 1, contentBytes: 4000 });
    // The state's HEAD has no trimmed lengths (a row written before they were recorded): it is
    // measured from its content, and the database composes the append like any other.
    expect(contentCommit(decision).head.content).toEqual({
      keepChars: 4000,
      keepBytes: 4000,
      suffix: "\n\ns",
    });
    expect(contentCommit(decision).head.contentBytes).toBe(`${big}\n\ns`.length);
  });
});

describe("append size (AC-TASKS-PLAN-APPEND-007)", () => {
  const limit = 262_144;
  it("measures the composed content: exactly the limit is accepted", async () => {
    const stored = "a".repeat(limit - 3);
    expect(
      contentCommit(await decideContentWrite(write({ mode: "append", content: "b" }), stateWith(stored), env))
        .head.contentBytes,
    ).toBe(limit);
  });
  it("rejects one byte more, reporting the composed size", () => {
    const stored = "a".repeat(limit - 2);
    try {
      decideContentWrite(write({ mode: "append", content: "b" }), stateWith(stored), env);
      throw new Error("not rejected");
    } catch (error) {
      expect((error as PlanError).reason).toBe("PLAN_TOO_LARGE");
      expect((error as PlanError).metadata.size_bytes).toBe(String(limit + 1));
    }
  });
});
