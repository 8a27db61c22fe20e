import { unifiedDiff, unifiedDiffSliced } from "../../../src/plans/changes/unified-diff";
import { renderConflicts, CONFLICTS_MAX_BYTES } from "../../../src/plans/changes/merge-conflicts";
import { splitLines, joinLines } from "../../../src/plans/rules/plan-lines";

const labels = { old: "version 3", new: "version 5" };

describe("the unified diff of PlanDiff", () => {
  it("is empty, with sizes, when the contents are equal", () => {
    expect(unifiedDiff("a\n", "a\n", labels)).toEqual({
      unifiedDiff: "",
      oldBytes: 2,
      newBytes: 2,
      diffBytes: 0,
      linesAdded: 0,
      linesRemoved: 0,
    });
  });

  it("has the two header lines and hunks with three lines of context", () => {
    const old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const diff = unifiedDiff(old, old.replace("5\n", "five\n"), labels);
    expect(diff.unifiedDiff).toBe(
      "--- version 3\n+++ version 5\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
    );
    expect([diff.linesAdded, diff.linesRemoved, diff.diffBytes]).toEqual([
      1,
      1,
      Buffer.byteLength(diff.unifiedDiff),
    ]);
  });

  it("keeps a CRLF line's CR and compares line endings", () => {
    expect(unifiedDiff("a\r\nb\n", "a\nb\n", labels).unifiedDiff).toBe(
      "--- version 3\n+++ version 5\n@@ -1,2 +1,2 @@\n-a\r\n+a\n b\n",
    );
  });

  it("marks a last line without a newline", () => {
    expect(unifiedDiff("a\nb", "a\nb\n", labels).unifiedDiff).toBe(
      "--- version 3\n+++ version 5\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
    );
  });

  it("treats Unicode White_Space as a change", () => {
    expect(unifiedDiff("a b\n", "a\u00a0b\n", labels).linesAdded).toBe(1);
  });

  it("diffs from and to an empty content", () => {
    expect(unifiedDiff("", "x\n", labels).unifiedDiff).toBe(
      "--- version 3\n+++ version 5\n@@ -0,0 +1,1 @@\n+x\n",
    );
    expect(unifiedDiff("x\ny", "", labels).unifiedDiff).toBe(
      "--- version 3\n+++ version 5\n@@ -1,2 +0,0 @@\n-x\n-y\n\\ No newline at end of file\n",
    );
  });

  it("replaces every line when the contents differ too much to diff quickly, and is still correct", () => {
    const old = Array.from({ length: 1500 }, (_, i) => `line ${i}\n`).join("");
    const changed = old.toUpperCase() + "end";
    const diff = unifiedDiff(old, changed, labels);
    expect([diff.linesRemoved, diff.linesAdded]).toEqual([1500, 1501]);
    const lines = diff.unifiedDiff.split("\n");
    expect(lines.slice(0, 4)).toEqual(["--- version 3", "+++ version 5", "@@ -1,1500 +1,1501 @@", "-line 0"]);
    expect(lines.slice(-3)).toEqual(["+end", "\\ No newline at end of file", ""]);
  });
});

describe("plan lines", () => {
  it.each(["", "a", "a\n", "a\r\nb", "\n\n", "x\ry\n"])(
    "split keeps terminators and joins back exactly: %j",
    (text) => {
      expect(joinLines(splitLines(text))).toBe(text);
    },
  );
  it("splits at LF only (a lone CR is part of its line)", () => {
    expect(splitLines("a\r\nb\rc\nd")).toEqual(["a\r\n", "b\rc\n", "d"]);
  });
});

describe("conflicting regions as a MERGE_CONFLICT shows them", () => {
  it("uses diff3's markers, a line without newline shown with one", () => {
    expect(
      renderConflicts([
        { baseStart: 2, base: ["b\n"], ours: ["X\n"], theirs: ["Y"] },
        { baseStart: 5, base: [], ours: ["mine\n"], theirs: ["yours\n"] },
      ]),
    ).toBe(
      "@@ base lines 3-3 @@\n<<<<<<< yours\nX\n||||||| base\nb\n=======\nY\n>>>>>>> current\n" +
        "@@ after base line 5 @@\n<<<<<<< yours\nmine\n||||||| base\n=======\nyours\n>>>>>>> current\n",
    );
  });

  it(`stays within ${CONFLICTS_MAX_BYTES} bytes, cut at a line, and says how many regions it left out`, () => {
    const big = Array.from({ length: 200 }, (_, i) => `a long conflicting line number ${i}\n`);
    const regions = Array.from({ length: 5 }, (_, i) => ({
      baseStart: i * 300,
      base: big,
      ours: big,
      theirs: big,
    }));
    const text = renderConflicts(regions);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(CONFLICTS_MAX_BYTES);
    expect(text.startsWith("@@ base lines 1-200 @@\n<<<<<<< yours\na long conflicting line number 0\n")).toBe(
      true,
    );
    expect(text.endsWith("\n... 5 more regions not shown\n")).toBe(true);
  });
});

describe("the unified diff in slices (the service's), against the one-piece diff", () => {
  const cases: [string, string, string][] = [
    ["equal", "a\nb\n", "a\nb\n"],
    ["one line changed", "a\nb\nc\n", "a\nB\nc\n"],
    ["CRLF and no final newline", "a\r\nb", "a\nb"],
    ["from empty", "", "x\ny\n"],
    ["to empty", "x\ny\n", ""],
    [
      "too different to diff quickly",
      Array.from({ length: 1500 }, (_, i) => `line ${i}\n`).join(""),
      Array.from({ length: 1500 }, (_, i) => `LINE ${i}\n`).join("") + "end",
    ],
  ];
  it.each(cases)("%s", async (_, old, changed) => {
    const labels = { old: "version 3", new: "version 5" };
    expect(await unifiedDiffSliced(old, changed, labels)).toEqual(unifiedDiff(old, changed, labels));
  });

  it("lets timers run while it diffs", async () => {
    const old = Array.from({ length: 1500 }, (_, i) => `line ${i}\n`).join("");
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 0);
    try {
      await unifiedDiffSliced(old, old.toUpperCase(), { old: "a", new: "b" });
    } finally {
      clearInterval(ticking);
    }
    expect(ticks).toBeGreaterThan(10);
  });
});
