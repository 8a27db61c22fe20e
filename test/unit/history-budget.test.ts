import { checkHistoryBudget, mayExceedHistoryBudget } from "../../src/plans/history-budget";
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

describe("when the history budget needs no usage query", () => {
  const defaults = { maxRevisions: 10_000, maxBytes: 64 * 1024 * 1024 };
  const newRevision = { revisionBytes: 100, replacedBytes: null };
  const coalesced = { revisionBytes: 100, replacedBytes: 50 };
  const at = (latestNumber: number, headVersion = latestNumber) => ({ latestNumber, headVersion });
  it.each([
    ["a task with 10 revisions and versions under the defaults", defaults, at(10), newRevision, false],
    // 256 copies of 256 KiB fill 64 MiB: revisions plus up to four per version (change rows).
    ["50 versions and one more revision fit 64 MiB", defaults, at(50), newRevision, false],
    ["52 versions might not", defaults, at(52), newRevision, true],
    ["coalescing adds no revision", defaults, at(1, 50), coalesced, false],
    [
      "a revision count budget reached by the next revision",
      { maxRevisions: 3, maxBytes: 0 },
      at(3),
      newRevision,
      true,
    ],
    ["no budget at all", { maxRevisions: 0, maxBytes: 0 }, at(1e9), newRevision, false],
    [
      "a revision larger than the bound per revision",
      { maxRevisions: 0, maxBytes: 1_000_000 },
      at(0),
      { revisionBytes: 600_000, replacedBytes: null },
      true,
    ],
  ])("%s", (_name, budget, history, growth, expected) => {
    expect(mayExceedHistoryBudget(budget, history, growth, 262_144)).toBe(expected);
  });

  it("whenever it says no, checkHistoryBudget passes for every history the bound allows", () => {
    const budget = { maxRevisions: 50, maxBytes: 20_000 };
    for (let version = 0; version <= 60; version++) {
      for (const growth of [newRevision, coalesced]) {
        const history = { latestNumber: version, headVersion: version };
        if (mayExceedHistoryBudget(budget, history, growth, 300)) continue;
        // The worst history the bound admits, before and after one more write: every revision and
        // two change rows per version holding two copies of 300 bytes each.
        const before = { revisions: version, bytes: (version + 4 * version) * 300 };
        const after = {
          revisions: version + (growth.replacedBytes === null ? 1 : 0),
          bytes: before.bytes + 3 * 300,
        };
        expect(reasonOf(() => checkHistoryBudget(budget, before, after))).toBe("ok");
      }
    }
  });
});
