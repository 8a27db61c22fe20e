import {
  afterSnapshot,
  afterVersion,
  checkResumable,
  compareChangeKeys,
  contentChange,
  deleteChange,
  followsDirectly,
  implementationStartedChange,
  lastChangeOf,
} from "../../../src/plans/changes/change-rows";
import { PlanError } from "../../../src/plans/errors";
import type { ChangedPlan, ChangeKind, ChangeRecord } from "../../../src/plans/ports/records";

const plan: ChangedPlan = {
  taskId: "t",
  title: "Plan",
  contentBytes: 10,
  contentChars: 10,
  version: 4,
  createdBy: "agent",
  createdAt: new Date(1_000),
  updatedAt: new Date(2_000),
  latestRevisionNumber: 3,
  deleted: false,
  implementationStartedAt: null,
  implementationStartedBy: null,
  implementationStartedSessionId: null,
  checklist: null,
};
const author = { kind: "agent" as const, name: "Agent" };
const at = new Date(5_000);

const reasonOf = (run: () => void): string | null => {
  try {
    run();
    return null;
  } catch (error) {
    return error instanceof PlanError ? error.reason : String(error);
  }
};

describe("change keys", () => {
  it("order by version, then the implementation mark after its version's write", () => {
    const keys = [
      { version: 2, step: 1 as const },
      { version: 1, step: 0 as const },
      { version: 2, step: 0 as const },
      { version: 3, step: 0 as const },
    ];
    expect([...keys].sort(compareChangeKeys)).toEqual([keys[1], keys[2], keys[0], keys[3]]);
  });

  it("a resume after V skips V's implementation mark; a snapshot includes the mark it shows", () => {
    expect(afterVersion(7)).toEqual({ version: 7, step: 1 });
    expect(afterSnapshot(null)).toEqual({ version: 0, step: 1 });
    expect(afterSnapshot({ version: 7, implementationStartedAt: null })).toEqual({ version: 7, step: 0 });
    expect(afterSnapshot({ version: 7, implementationStartedAt: new Date() })).toEqual({
      version: 7,
      step: 1,
    });
  });
});

describe("checkResumable", () => {
  it("accepts a resume point whose following versions are all retained", () => {
    expect(reasonOf(() => checkResumable(5, 5, null))).toBeNull(); // nothing after it yet
    expect(reasonOf(() => checkResumable(5, 9, 6))).toBeNull();
    expect(reasonOf(() => checkResumable(5, 9, 2))).toBeNull();
    expect(reasonOf(() => checkResumable(0, 3, 1))).toBeNull();
  });

  it("refuses one older than the retained history, or ahead of the plan, with WATCH_HISTORY_EXPIRED", () => {
    expect(reasonOf(() => checkResumable(5, 9, 7))).toBe("WATCH_HISTORY_EXPIRED");
    expect(reasonOf(() => checkResumable(5, 9, null))).toBe("WATCH_HISTORY_EXPIRED");
    expect(reasonOf(() => checkResumable(10, 9, 1))).toBe("WATCH_HISTORY_EXPIRED");
    expect(reasonOf(() => checkResumable(1, 0, null))).toBe("WATCH_HISTORY_EXPIRED");
  });
});

describe("the change of each write", () => {
  const revision = { id: "r", number: 3, coalesced: true };
  it("is CREATED, UPDATED or REVERTED for content writes, at step 0 of the new version", () => {
    const of = (created: boolean, reverted: boolean) =>
      contentChange({ plan, created, reverted, revision, author, at }).kind;
    expect([of(true, false), of(false, false), of(true, true), of(false, true)]).toEqual([
      "created",
      "updated",
      "reverted",
      "reverted",
    ]);
    expect(contentChange({ plan, created: false, reverted: false, revision, author, at })).toMatchObject({
      taskId: "t",
      version: 4,
      step: 0,
      revision,
      committedAt: at,
    });
  });

  it("a delete carries the deleted plan at its new version; a mark keeps the version, at step 1", () => {
    expect(deleteChange(plan, 5, author, at)).toMatchObject({
      kind: "deleted",
      version: 5,
      step: 0,
      plan: { version: 5, title: "Plan", updatedAt: at },
      revision: null,
    });
    expect(implementationStartedChange(plan, author, at)).toMatchObject({
      kind: "implementation-started",
      version: 4,
      step: 1,
    });
  });
});

describe("followsDirectly (a notified change delivered without reading the history)", () => {
  const at = (version: number, step: 0 | 1, kind: ChangeKind, marked: boolean) =>
    ({
      version,
      step,
      kind,
      plan: { ...plan, version, implementationStartedAt: marked ? new Date(0) : null },
    }) as unknown as ChangeRecord;
  const last = (version: number, step: 0 | 1, kind: ChangeKind, marked: boolean) =>
    lastChangeOf(at(version, step, kind, marked));

  it.each([
    [
      "the mark of the cursor's version",
      last(4, 0, "updated", false),
      at(4, 1, "implementation-started", true),
      true,
    ],
    [
      "a second mark",
      last(4, 1, "implementation-started", true),
      at(4, 1, "implementation-started", true),
      false,
    ],
    [
      "the next version after a mark",
      last(4, 1, "implementation-started", true),
      at(5, 0, "updated", true),
      true,
    ],
    [
      "the next version of a plan marked before",
      last(4, 0, "updated", true),
      at(5, 0, "updated", true),
      true,
    ],
    ["the next version after a delete", last(4, 0, "deleted", false), at(5, 0, "created", false), true],
    [
      "an unmarked next version (no mark can sit between)",
      last(4, 0, "updated", false),
      at(5, 0, "updated", false),
      true,
    ],
    [
      "a next version marked since (its mark may sit between)",
      last(4, 0, "updated", false),
      at(5, 0, "updated", true),
      false,
    ],
    ["a delete of a plan marked since", last(4, 0, "updated", false), at(5, 0, "deleted", true), false],
    ["a version skipped", last(4, 0, "updated", true), at(6, 0, "updated", true), false],
    ["an older version", last(4, 0, "updated", true), at(4, 0, "updated", true), false],
  ])("%s: %s", (_what, previous, next, expected) => {
    expect(followsDirectly(previous, next)).toBe(expected);
  });
});
