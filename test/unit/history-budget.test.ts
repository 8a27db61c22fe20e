import { checkHistoryBudget, mayExceedHistoryBudget } from "../../src/plans/history-budget";
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

describe("when the history budget needs no usage query", () => {
  const defaults = { maxRevisions: 10_000, maxBytes: 64 * 1024 * 1024 };
  const newRevision = { revisionBytes: 100, replacedBytes: null };
  const coalesced = { revisionBytes: 100, replacedBytes: 50 };
  it.each([
    ["a task with 10 revisions under the defaults", defaults, 10, newRevision, false],
    ["255 revisions of at most 256 KiB and one more fit 64 MiB", defaults, 255, newRevision, false],
    ["the 257th revision might not", defaults, 256, newRevision, true],
    ["coalescing adds no revision", defaults, 256, coalesced, false],
    [
      "a revision count budget reached by the next revision",
      { maxRevisions: 3, maxBytes: 0 },
      3,
      newRevision,
      true,
    ],
    ["no budget at all", { maxRevisions: 0, maxBytes: 0 }, 1e9, newRevision, false],
    [
      "a revision larger than the bound per revision",
      { maxRevisions: 0, maxBytes: 1_000_000 },
      1,
      { revisionBytes: 600_000, replacedBytes: null },
      true,
    ],
  ])("%s", (_name, budget, latestNumber, growth, expected) => {
    expect(mayExceedHistoryBudget(budget, latestNumber, growth, 262_144)).toBe(expected);
  });

  it("whenever it says no, checkHistoryBudget passes for every usage the bound allows", () => {
    const budget = { maxRevisions: 50, maxBytes: 20_000 };
    for (let latest = 0; latest <= 60; latest++) {
      for (const growth of [newRevision, coalesced]) {
        if (mayExceedHistoryBudget(budget, latest, growth, 300)) continue;
        // The worst history the bound admits: `latest` revisions of 300 bytes each.
        const worst = { revisions: latest, bytes: latest * 300 };
        expect(reasonOf(() => checkHistoryBudget(budget, worst, growth))).toBe("ok");
      }
    }
  });
});
