import { checkHistoryBudget } from "../../src/plans/history-budget";
import { reasonOf } from "../harness/reason-of";

const budget = { maxRevisions: 3, maxBytes: 1_000 };

describe("the per-task history budget", () => {
  it.each([
    [
      "a new revision within both limits",
      { revisions: 2, bytes: 500 },
      { revisionBytes: 500, replacedBytes: null },
      "ok",
    ],
    [
      "the revision that reaches exactly the limits",
      { revisions: 2, bytes: 400 },
      { revisionBytes: 600, replacedBytes: null },
      "ok",
    ],
    [
      "one revision too many",
      { revisions: 3, bytes: 10 },
      { revisionBytes: 1, replacedBytes: null },
      "HISTORY_QUOTA_EXCEEDED",
    ],
    [
      "one byte too many",
      { revisions: 1, bytes: 500 },
      { revisionBytes: 501, replacedBytes: null },
      "HISTORY_QUOTA_EXCEEDED",
    ],
    [
      "coalescing at the revision limit (no new revision)",
      { revisions: 3, bytes: 900 },
      { revisionBytes: 100, replacedBytes: 50 },
      "ok",
    ],
    [
      "coalescing that grows past the byte limit",
      { revisions: 3, bytes: 900 },
      { revisionBytes: 200, replacedBytes: 50 },
      "HISTORY_QUOTA_EXCEEDED",
    ],
    [
      "coalescing that shrinks a history already over budget",
      { revisions: 9, bytes: 5_000 },
      { revisionBytes: 10, replacedBytes: 50 },
      "ok",
    ],
  ])("%s", (_name, usage, growth, expected) => {
    expect(reasonOf(() => checkHistoryBudget(budget, usage, growth))).toBe(expected);
  });

  it("0 means no limit", () => {
    const none = { maxRevisions: 0, maxBytes: 0 };
    expect(
      reasonOf(() =>
        checkHistoryBudget(none, { revisions: 1e9, bytes: 1e12 }, { revisionBytes: 1, replacedBytes: null }),
      ),
    ).toBe("ok");
  });
});
