import { reasonOf } from "../../harness/fixtures/reason-of";
import { applyExactEdit, countOccurrences } from "../../../src/plans/rules/exact-edit";
import { PlanError } from "../../../src/plans/errors";
import { readRange } from "../../../src/plans/rules/partial-read";
import { revisionVersion } from "../../../src/plans/rules/revision-version";

describe("exact-text edit", () => {
  it.each([
    ["aaa", "aa", 2],
    ["one\nstone", "one", 2],
    ["abc", "abcd", 0],
    ["😀😀", "😀", 2],
    ["a\r\nb", "\n", 1],
    ["", "x", 0],
  ])("%j holds %j %d times (overlapping included)", (text, needle, count) => {
    expect(countOccurrences(text, needle).count).toBe(count);
  });

  // The old count (repeated indexOf), kept as the twin the linear search must agree with.
  function naiveCount(text: string, needle: string): { count: number; first: number } {
    let count = 0;
    let first = -1;
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
      if (count === 0) first = at;
      count++;
    }
    return { count, first };
  }

  it("agrees with repeated indexOf on random texts of a small alphabet (borders and overlaps)", () => {
    let seed = 54;
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const word = (length: number): string => Array.from({ length }, () => "ab\n😀"[next(4)] ?? "").join("");
    for (let i = 0; i < 2_000; i++) {
      const text = word(next(40));
      const needle = next(3) === 0 && text.length > 0 ? text.slice(next(text.length)) : word(1 + next(6));
      if (needle === "") continue;
      expect(countOccurrences(text, needle)).toEqual(naiveCount(text, needle));
    }
  });

  it("counts every overlapping occurrence of a long repeated letter exactly (issue 54's input)", () => {
    // 262,144 "a" holding 131,072 "a": 131,073 occurrences; the old count took seconds here.
    const plan = "a".repeat(262_144);
    expect(countOccurrences(plan, "a".repeat(131_072))).toEqual({ count: 131_073, first: 0 });
    expect(countOccurrences(plan, "a".repeat(16_384))).toEqual({ count: 245_761, first: 0 });
    expect(countOccurrences(plan + "b", "a".repeat(131_072) + "b")).toEqual({ count: 1, first: 131_072 });
    try {
      applyExactEdit(plan, "a".repeat(65_536), "b");
      throw new Error("not rejected");
    } catch (error) {
      expect((error as PlanError).reason).toBe("EDIT_TEXT_NOT_UNIQUE");
      expect((error as PlanError).metadata.occurrences).toBe("196609");
    }
    expect(applyExactEdit(plan + "b", "a".repeat(131_072) + "b", "c")).toBe("a".repeat(131_072) + "c");
  });

  it("replaces the single occurrence exactly, CRLF and indentation preserved", () => {
    expect(applyExactEdit("- [ ] a\r\n  - [ ] b\r\n", "  - [ ] b", "  - [x] b")).toBe(
      "- [ ] a\r\n  - [x] b\r\n",
    );
  });
  it("deletes with an empty replacement", () => {
    expect(applyExactEdit("keep DROP keep", " DROP", "")).toBe("keep keep");
  });
  it("never splits an astral character", () => {
    expect(applyExactEdit("a😀b", "😀", "X")).toBe("aXb");
    // A lone low surrogate never matches inside a valid pair's neighbourhood in valid text.
    expect(countOccurrences("😀", "\ude00").count).toBe(1); // documented: needles must be valid text
  });
  it("EDIT_TEXT_NOT_FOUND for zero, EDIT_TEXT_NOT_UNIQUE with the count for several", () => {
    expect(reasonOf(() => applyExactEdit("abc", "x", "y"))).toBe("EDIT_TEXT_NOT_FOUND");
    try {
      applyExactEdit("aaa", "aa", "b");
      throw new Error("not rejected");
    } catch (error) {
      expect((error as PlanError).reason).toBe("EDIT_TEXT_NOT_UNIQUE");
      expect((error as PlanError).metadata.occurrences).toBe("2");
    }
  });
});

describe("partial reads in code points", () => {
  const text = "a\r\n猫😀e\u0301\nlast"; // 12 code points
  it.each([
    [undefined, undefined, text, null, false],
    [0, 3, "a\r\n", 3, true],
    [3, 4, "猫😀e\u0301", 7, true],
    [8, 65_536, "last", null, false],
    [12, undefined, "", null, false],
    [4, 1, "😀", 5, true],
    [6, 1, "\u0301", 7, true], // a combining sequence may be split (documented)
  ])("offset %p limit %p", (offset, limit, content, nextOffset, hasMore) => {
    expect(readRange(text, offset, limit)).toEqual({ content, totalChars: 12, nextOffset, hasMore });
  });
  it("offset past the end is OFFSET_OUT_OF_RANGE; limit outside 1..65,536 is INVALID_FIELD", () => {
    expect(reasonOf(() => readRange(text, 13, undefined))).toBe("OFFSET_OUT_OF_RANGE");
    expect(reasonOf(() => readRange(text, 0, 0))).toBe("INVALID_FIELD");
    expect(reasonOf(() => readRange(text, 0, 65_537))).toBe("INVALID_FIELD");
  });
  it("ranges concatenate back to the document", () => {
    const doc = "😀ab\u00e9😀\n".repeat(50);
    let rebuilt = "";
    let offset: number | null = 0;
    while (offset !== null) {
      const range = readRange(doc, offset, 7);
      rebuilt += range.content;
      offset = range.nextOffset;
    }
    expect(rebuilt).toBe(doc);
  });
});

describe("revision_version", () => {
  it("is stable for one row state and changes with the row version or id", () => {
    const a = revisionVersion({ id: "r1", rowVersion: 1 });
    expect(revisionVersion({ id: "r1", rowVersion: 1 })).toBe(a);
    expect(revisionVersion({ id: "r1", rowVersion: 2 })).not.toBe(a);
    expect(revisionVersion({ id: "r2", rowVersion: 1 })).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
  });
});
