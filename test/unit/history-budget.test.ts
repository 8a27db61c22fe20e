import { checkHistoryBudget, historyOverBudget } from "../../src/plans/history-budget";
import { reasonOf } from "../harness/reason-of";

const budget = { maxRevisions: 3, maxBytes: 1_000 };

describe("the per-task history budget (measured before and after the write's rows)", () => {
  it.each([
    ["a new revision within both limits", { revisions: 2, bytes: 500 }, { revisions: 3, bytes: 900 }, "ok"],
    [
      "a write that reaches exactly the limits",
      { revisions: 2, bytes: 400 },
      { revisions: 3, bytes: 1_000 },
      "ok",
    ],
    [
      "one revision too many",
      { revisions: 3, bytes: 10 },
      { revisions: 4, bytes: 11 },
      "HISTORY_QUOTA_EXCEEDED",
    ],
    [
      "one byte too many",
      { revisions: 1, bytes: 500 },
      { revisions: 2, bytes: 1_001 },
      "HISTORY_QUOTA_EXCEEDED",
    ],
    // The change history's copy counts like a revision's: a coalesced write still stores one.
    [
      "a coalesced write whose change copy passes the byte limit",
      { revisions: 3, bytes: 900 },
      { revisions: 3, bytes: 1_050 },
      "HISTORY_QUOTA_EXCEEDED",
    ],
    [
      "coalescing at the revision limit (no new revision)",
      { revisions: 3, bytes: 500 },
      { revisions: 3, bytes: 600 },
      "ok",
    ],
    [
      "a write that shrinks a history already over budget",
      { revisions: 9, bytes: 5_000 },
      { revisions: 9, bytes: 4_000 },
      "ok",
    ],
  ])("%s", (_name, before, after, expected) => {
    expect(reasonOf(() => checkHistoryBudget(budget, before, after))).toBe(expected);
  });

  it("reports the limit and the usage before the write", () => {
    try {
      checkHistoryBudget(budget, { revisions: 1, bytes: 700 }, { revisions: 2, bytes: 1_400 });
      throw new Error("not refused");
    } catch (error) {
      expect((error as { metadata: Record<string, string> }).metadata).toMatchObject({
        limit: "bytes",
        limit_bytes: "1000",
        used_bytes: "700",
      });
    }
  });

  it("0 means no limit", () => {
    const none = { maxRevisions: 0, maxBytes: 0 };
    expect(
      reasonOf(() =>
        checkHistoryBudget(none, { revisions: 1e9, bytes: 1e12 }, { revisions: 2e9, bytes: 2e12 }),
      ),
    ).toBe("ok");
  });
});

describe("what the change history yields to the byte budget", () => {
  it.each([
    ["within the budget", { maxRevisions: 0, maxBytes: 1_000 }, 999, 0],
    ["at the budget", { maxRevisions: 0, maxBytes: 1_000 }, 1_000, 0],
    ["past it", { maxRevisions: 0, maxBytes: 1_000 }, 1_250, 250],
    ["without a byte budget", { maxRevisions: 5, maxBytes: 0 }, 1e12, 0],
  ])("%s", (_name, budget, bytes, excess) => {
    expect(historyOverBudget(budget, { revisions: 1, bytes })).toBe(excess);
  });
});
