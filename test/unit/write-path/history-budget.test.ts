import { checkHistoryBudget, historyAllowance } from "../../../src/plans/pipeline/history-budget";
import type { HistoryUsage } from "../../../src/plans/ports/records";
import { reasonOf } from "../../harness/fixtures/reason-of";

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

describe("what a content write may leave the history at (the allowance storage fits it to)", () => {
  it.each([
    [
      "limits above the usage",
      { maxRevisions: 5, maxBytes: 1_000 },
      { revisions: 2, bytes: 400 },
      [5, 1_000, 1_000],
    ],
    [
      "usage already above them",
      { maxRevisions: 5, maxBytes: 1_000 },
      { revisions: 9, bytes: 1_500 },
      [9, 1_500, 1_000],
    ],
    [
      "no limits",
      { maxRevisions: 0, maxBytes: 0 },
      { revisions: 9, bytes: 1_500 },
      [Infinity, Infinity, Infinity],
    ],
  ])("%s", (_name, budget, before, [revisions, bytes, trimToBytes]) => {
    expect(historyAllowance(budget, before)).toEqual({ revisions, bytes, trimToBytes });
  });

  // The rule as the budget states it: a measure is over when it passes its limit and grew.
  const overBudget = (b: typeof budget, before: HistoryUsage, after: HistoryUsage) =>
    (b.maxRevisions > 0 && after.revisions > b.maxRevisions && after.revisions > before.revisions) ||
    (b.maxBytes > 0 && after.bytes > b.maxBytes && after.bytes > before.bytes);

  it("holds exactly what the budget's rule accepts, and checkHistoryBudget refuses the rest", () => {
    const figures = [0, 1, 2, 3, 4, 999, 1_000, 1_001, 1_500];
    for (const maxRevisions of [0, 3])
      for (const maxBytes of [0, 1_000])
        for (const revisions of figures)
          for (const bytes of figures)
            for (const after of [
              { revisions: 3, bytes: 1_000 },
              { revisions: 4, bytes: 999 },
              { revisions: 2, bytes: 1_001 },
            ]) {
              const limits = { maxRevisions, maxBytes };
              const before = { revisions, bytes };
              const allowed = historyAllowance(limits, before);
              const within = after.revisions <= allowed.revisions && after.bytes <= allowed.bytes;
              const checked = reasonOf(() => checkHistoryBudget(limits, before, after));
              expect({ limits, before, after, within, checked }).toEqual({
                limits,
                before,
                after,
                within: !overBudget(limits, before, after),
                checked: within ? "ok" : "HISTORY_QUOTA_EXCEEDED",
              });
            }
  });
});
