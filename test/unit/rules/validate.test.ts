import { reasonOf as reasonWithField } from "../../harness/fixtures/reason-of";
import { PlanError, planErrors } from "../../../src/plans/errors";
import { decodePageToken, encodePageToken } from "../../../src/plans/rules/page-token";
import { isSuspiciousReduction } from "../../../src/plans/rules/reduction";
import {
  checkSize,
  checkTitle,
  effectivePageSize,
  parseWriteMode,
  requireId,
} from "../../../src/plans/rules/validate";
import { afterReach, type WriteCommand } from "../../../src/plans/pipeline/write-command";
import type { ReadKind } from "../../../src/plans/ports/records";

const reasonOf = (action: () => unknown) => reasonWithField(action, true);

describe("ids", () => {
  it.each([
    ["", "INVALID_FIELD:task_id"],
    ["a b", "INVALID_FIELD:task_id"],
    ["x".repeat(129), "INVALID_FIELD:task_id"],
    ["tâche", "INVALID_FIELD:task_id"],
    ["x".repeat(128), "ok"],
    ["550e8400-e29b-41d4-a716-446655440000", "ok"],
  ])("task_id %j -> %s", (value, expected) => {
    expect(reasonOf(() => requireId("task_id", value))).toBe(expected);
  });
});

describe("titles", () => {
  it("accepts an absent title and 1,000 code points", () => {
    expect(checkTitle("title", undefined)).toBeUndefined();
    expect(checkTitle("title", "😀".repeat(1000))).toHaveLength(2000);
  });
  it("rejects 1,001 code points and line breaks", () => {
    expect(reasonOf(() => checkTitle("title", "a".repeat(1001)))).toBe("INVALID_FIELD:title");
    expect(reasonOf(() => checkTitle("title", "a\nb"))).toBe("INVALID_FIELD:title");
  });

  it("rejects every control character and the line and paragraph separators, and nothing printable", () => {
    const rejected = ["\0", "\t", "\r", "\x1b", "\x7f", "\u0085", "\u009f", "\u2028", "\u2029"];
    for (const char of rejected) {
      expect([char, reasonOf(() => checkTitle("title", `a${char}b`))]).toEqual([char, "INVALID_FIELD:title"]);
    }
    const accepted = [
      "Plan: ship it",
      "Étape 2 — fin",
      "計画",
      "a\u00a0b",
      "a\u3000b",
      "emoji 😀",
      "zero\u200bwidth",
    ];
    for (const title of accepted) expect(checkTitle("title", title)).toBe(title);
  });
});

describe("size limit (262,144 UTF-8 bytes)", () => {
  it("accepts exactly the limit and rejects one byte more with both sizes in metadata", () => {
    expect(reasonOf(() => checkSize(262_144))).toBe("ok");
    try {
      checkSize(262_145);
      throw new Error("not rejected");
    } catch (error) {
      expect(error).toBeInstanceOf(PlanError);
      expect((error as PlanError).reason).toBe("PLAN_TOO_LARGE");
      expect((error as PlanError).metadata).toMatchObject({ size_bytes: "262145", limit_bytes: "262144" });
    }
  });
});

describe("page size (AIP-158)", () => {
  it.each([
    [0, 20],
    [1, 1],
    [100, 100],
    [101, 100],
    [1000, 100],
  ])("%d -> %d", (given, effective) => {
    expect(effectivePageSize(given)).toBe(effective);
  });
  it("rejects a negative page size naming page_size", () => {
    expect(reasonOf(() => effectivePageSize(-1))).toBe("INVALID_FIELD:page_size");
  });
});

describe("page tokens", () => {
  it("round-trips for the same task", () => {
    expect(decodePageToken("t1", encodePageToken("t1", 21))).toBe(21);
    expect(decodePageToken("t1", "")).toBeNull();
  });
  it.each([
    ["garbage", "not-base64!"],
    ["another task's token", encodePageToken("t2", 5)],
    ["a non-integer cursor", Buffer.from('{"t":"t1","b":1.5}').toString("base64url")],
    ["a zero cursor", Buffer.from('{"t":"t1","b":0}').toString("base64url")],
  ])("rejects %s naming page_token", (_name, token) => {
    expect(reasonOf(() => decodePageToken("t1", token))).toBe("INVALID_FIELD:page_token");
  });
});

describe("write mode (AC-TASKS-PLAN-APPEND-001.1 to 001.3)", () => {
  it("AC-TASKS-PLAN-APPEND-001.1: an empty mode is replace", () => {
    expect(parseWriteMode("")).toBe("replace");
  });
  it("AC-TASKS-PLAN-APPEND-001.2: replace and append are themselves", () => {
    expect(parseWriteMode("replace")).toBe("replace");
    expect(parseWriteMode("append")).toBe("append");
  });
  it.each(["Append", "APPEND", "REPLACE", "merge", "7"])(
    "AC-TASKS-PLAN-APPEND-001.3: %j is rejected naming both accepted values",
    (mode) => {
      try {
        parseWriteMode(mode);
        throw new Error("not rejected");
      } catch (error) {
        expect((error as PlanError).reason).toBe("INVALID_WRITE_MODE");
        expect((error as PlanError).message).toContain('"replace"');
        expect((error as PlanError).message).toContain('"append"');
      }
    },
  );
});

describe("reduction guard thresholds (code points)", () => {
  it.each([
    [1999, 0, false],
    [2000, 999, true],
    [2000, 1000, false],
    [2001, 1000, true],
    [16332, 807, true],
  ])("prior %d, new %d -> %s", (prior, next, suspicious) => {
    expect(isSuspiciousReduction(prior, next)).toBe(suspicious);
  });
});

const command: WriteCommand<ReadKind, void> = {
  taskId: "t",
  kind: "delete_task",
  reads: "metadata",
  decide: () => ({ commit: { kind: "delete-task", taskId: "t", plan: null }, result: undefined }),
};

describe("afterReach (checks reported after the task's reach, AC-TASKS-PLAN-APPEND-001.7)", () => {
  it("hands on the command its checks built", () => {
    expect(afterReach("t", () => command)).toBe(command);
  });

  it("carries a rule's refusal as a value, for the pipeline to raise after reach", () => {
    const refusal = planErrors.contentRequired();
    expect(
      afterReach("t", () => {
        throw refusal;
      }),
    ).toEqual({ taskId: "t", refusal });
  });

  it("lets any other error through: a bug is not a refusal", () => {
    expect(() =>
      afterReach("t", () => {
        throw new TypeError("bug");
      }),
    ).toThrow(TypeError);
  });
});
