import fc from "fast-check";
import { diffArrays } from "diff";
import { splitLines } from "../../../src/plans/rules/plan-lines";
import {
  type MergeResult,
  mergeThreeWay,
  mergeThreeWaySliced,
} from "../../../src/plans/changes/three-way-merge";

// The merge rules of proto "Merging a stale write", one case per rule: base, ours (the stale
// writer's result), theirs (the current content), and the merged text or the conflicting regions.
const merged = (content: string): MergeResult => ({ merged: true, content });
const conflict = (baseStart: number, base: string[], ours: string[], theirs: string[]): MergeResult => ({
  merged: false,
  conflicts: [{ baseStart, base, ours, theirs }],
  tooDifferent: false,
});

describe("three-way merge of a stale write, rule by rule", () => {
  it.each<[string, string, string, string, MergeResult]>([
    ["nothing changed", "a\nb\n", "a\nb\n", "a\nb\n", merged("a\nb\n")],
    ["only ours changed", "a\nb\n", "a\nB\n", "a\nb\n", merged("a\nB\n")],
    ["only theirs changed", "a\nb\n", "a\nb\n", "a\nb\nc\n", merged("a\nb\nc\n")],
    [
      "both edit different lines (an unchanged line between)",
      "a\nb\nc\n",
      "A\nb\nc\n",
      "a\nb\nC\n",
      merged("A\nb\nC\n"),
    ],
    [
      "both edit neighbouring lines: both kept (diff3 and git would call it a conflict)",
      "a\nb\nc\n",
      "A\nb\nc\n",
      "a\nB\nc\n",
      merged("A\nB\nc\n"),
    ],
    [
      "both edit the same line differently",
      "a\nb\nc\n",
      "a\nX\nc\n",
      "a\nY\nc\n",
      conflict(1, ["b\n"], ["X\n"], ["Y\n"]),
    ],
    [
      "both edit the same line the same way: taken once",
      "a\nb\nc\n",
      "a\nX\nc\n",
      "a\nX\nc\n",
      merged("a\nX\nc\n"),
    ],
    [
      "both append different lines at the end: theirs, then ours",
      "a\n",
      "a\nours\n",
      "a\ntheirs\n",
      merged("a\ntheirs\nours\n"),
    ],
    [
      "both append the same line at the end: taken once",
      "a\n",
      "a\nsame\n",
      "a\nsame\n",
      merged("a\nsame\n"),
    ],
    [
      "ours appends, theirs edits the first of several lines",
      "a\nb\nc\n",
      "a\nb\nc\nd\n",
      "A\nb\nc\n",
      merged("A\nb\nc\nd\n"),
    ],
    [
      "insertions on either side of one unchanged line",
      "a\nb\nc\n",
      "a\nX\nb\nc\n",
      "a\nb\nY\nc\n",
      merged("a\nX\nb\nY\nc\n"),
    ],
    [
      "ours deletes a line theirs edits: a conflict",
      "a\nb\nc\n",
      "a\nc\n",
      "a\nB\nc\n",
      conflict(1, ["b\n"], [], ["B\n"]),
    ],
    [
      "ours edits a line theirs deletes: a conflict",
      "a\nb\nc\n",
      "a\nB\nc\n",
      "a\nc\n",
      conflict(1, ["b\n"], ["B\n"], []),
    ],
    ["both delete the same line: taken once", "a\nb\nc\n", "a\nc\n", "a\nc\n", merged("a\nc\n")],
    [
      "CRLF lines merge and stay CRLF",
      "a\r\nb\r\nc\r\n",
      "A\r\nb\r\nc\r\n",
      "a\r\nb\r\nC\r\n",
      merged("A\r\nb\r\nC\r\n"),
    ],
    [
      "a line changed only in its ending (LF to CRLF) is a change",
      "a\nb\nc\n",
      "a\r\nb\nc\n",
      "a\nb\nc\n",
      merged("a\r\nb\nc\n"),
    ],
    [
      "a line ending changed by both differently: a conflict",
      "a\nb\n",
      "a\r\nb\n",
      "a \nb\n",
      conflict(0, ["a\n"], ["a\r\n"], ["a \n"]),
    ],
    [
      "no trailing newline: the last line is a line of its own",
      "a\nb\nc",
      "A\nb\nc",
      "a\nb\nc",
      merged("A\nb\nc"),
    ],
    [
      "adding a trailing newline changes the last line",
      "a\nb\nc",
      "a\nb\nc",
      "a\nb\nc\n",
      merged("a\nb\nc\n"),
    ],
    [
      "appending after a last line without newline changes that line: a neighbour's edit is kept",
      "a\nb",
      "A\nb",
      "a\nb\nc",
      merged("A\nb\nc"),
    ],
    [
      "both append at the end, theirs without a final newline: a conflict (the lines would join)",
      "a\n",
      "a\nours\n",
      "a\ntheirs",
      conflict(1, [], ["ours\n"], ["theirs"]),
    ],
    [
      "ours ends the document without a newline where theirs appends after it: a conflict",
      "a\nb\n",
      "a\nX",
      "a\nb\nt\n",
      conflict(1, ["b\n"], ["X"], ["b\n"]),
    ],
    [
      "one deletes a line next to the other's change: both kept",
      "a\nb\nc\n",
      "a\nc\n",
      "a\nb\nC\n",
      merged("a\nC\n"),
    ],
    [
      "an insertion next to the other's replacement: before it, and after it",
      "a\nb\nc\n",
      "a\nnew\nb\nc\nend\n",
      "a\nB\nc\n",
      merged("a\nnew\nB\nc\nend\n"),
    ],
    [
      "an insertion inside the other's replaced lines: a conflict",
      "a\nb\nc\nd\n",
      "a\nb\nnew\nc\nd\n",
      "a\nX\nY\nd\n",
      conflict(1, ["b\n", "c\n"], ["b\n", "new\n", "c\n"], ["X\n", "Y\n"]),
    ],
    [
      "neighbouring ticks of a checklist (issue 56), CRLF lines",
      "# Plan\r\n- [ ] a\r\n- [ ] b\r\n- [ ] c\r\n- [ ] d\r\n",
      "# Plan\r\n- [ ] a\r\n- [ ] b\r\n- [ ] c\r\n- [x] d\r\n",
      "# Plan\r\n- [ ] a\r\n- [ ] b\r\n- [x] c\r\n- [ ] d\r\n",
      merged("# Plan\r\n- [ ] a\r\n- [ ] b\r\n- [x] c\r\n- [x] d\r\n"),
    ],
    [
      "Unicode White_Space is significant (NBSP vs space)",
      "a b\nx\nc\n",
      "a\u00a0b\nx\nc\n",
      "a b\nx\nc\n",
      merged("a\u00a0b\nx\nc\n"),
    ],
    [
      "U+3000 and U+2028 are characters like any other",
      "a\nx\nb\n",
      "a\u3000\nx\nb\n",
      "a\nx\nb\u2028\n",
      merged("a\u3000\nx\nb\u2028\n"),
    ],
    [
      "whitespace-only differences at one line: a conflict",
      "a\n",
      "a \n",
      "a\t\n",
      conflict(0, ["a\n"], ["a \n"], ["a\t\n"]),
    ],
    [
      "empty base, different documents: theirs, then ours (two appends)",
      "",
      "ours\n",
      "theirs\n",
      merged("theirs\nours\n"),
    ],
    ["empty base, the same document: taken once", "", "same\n", "same\n", merged("same\n")],
    ["empty base, only theirs wrote", "", "", "theirs\n", merged("theirs\n")],
    ["ours empties what theirs left alone", "a\nb\n", "", "a\nb\n", merged("")],
    [
      "blank lines are lines",
      "a\n\nb\n\nc\n",
      "a\n\nB\n\nc\n",
      "a\n\nb\n\nc\n\nd\n",
      merged("a\n\nB\n\nc\n\nd\n"),
    ],
    [
      "astral characters and combining marks",
      "😀\ne\u0301\nz\n",
      "😀!\ne\u0301\nz\n",
      "😀\ne\u0301\nz\u{10ffff}\n",
      merged("😀!\ne\u0301\nz\u{10ffff}\n"),
    ],
  ])("%s", (_name, base, ours, theirs, expected) => {
    expect(mergeThreeWay(base, ours, theirs)).toEqual(expected);
  });

  it("reports every conflicting region, in base order", () => {
    const result = mergeThreeWay("a\nb\nc\nd\ne\n", "X\nb\nc\nd\nZ\n", "Y\nb\nc\nd\nW\n");
    expect(result).toEqual({
      merged: false,
      tooDifferent: false,
      conflicts: [
        { baseStart: 0, base: ["a\n"], ours: ["X\n"], theirs: ["Y\n"] },
        { baseStart: 4, base: ["e\n"], ours: ["Z\n"], theirs: ["W\n"] },
      ],
    });
  });

  it("sides too different to diff quickly are one conflicting region holding everything", () => {
    const base = Array.from({ length: 3000 }, (_, i) => `line ${i}\n`).join("");
    const ours = base.toUpperCase();
    const result = mergeThreeWay(base, ours, `${base}tail\n`);
    expect(result.merged).toBe(false);
    if (result.merged) return;
    expect(result.tooDifferent).toBe(true);
    expect(result.conflicts).toHaveLength(1);
    expect(result.conflicts[0]?.theirs).toHaveLength(3001);
  });

  it("is quick on markdown with many blank lines (where an LCS of repeated lines is slow)", () => {
    const base = Array.from({ length: 10_000 }, (_, i) => (i % 2 ? "\n" : `- [ ] item ${i}\n`)).join("");
    const result = mergeThreeWay(
      base,
      base.replace("- [ ] item 10\n", "- [x] item 10\n"),
      base.replace("- [ ] item 9000\n", "- [x] item 9000\n"),
    );
    expect(
      result.merged &&
        result.content.includes("- [x] item 10\n") &&
        result.content.includes("- [x] item 9000\n"),
    ).toBe(true);
  });
});

// Lines as hostile as plan text gets: duplicates, blanks, CRLF, White_Space, no terminator.
const line = fc.constantFrom(
  "a\n",
  "b\n",
  "\n",
  "\r\n",
  "- [ ] task\n",
  "- [x] task\n",
  "x\r\n",
  " \n",
  "\u00a0\n",
  "\u3000\n",
  "\u2028\n",
  "😀\n",
  "e\u0301\n",
);
const lines = fc.array(line, { maxLength: 12 });
const text = (parts: readonly string[], lastWithoutNewline: boolean) => {
  const joined = parts.join("");
  return lastWithoutNewline && joined.endsWith("\n") ? joined.slice(0, -1) : joined;
};

// A side's random edit of a list of lines: replace, delete and insert at random places.
const edited = (original: readonly string[]) =>
  fc
    .array(fc.tuple(fc.nat(), fc.constantFrom("replace", "delete", "insert"), line), { maxLength: 4 })
    .map((edits) => {
      const out = [...original];
      for (const [at, how, with_] of edits) {
        const i = out.length === 0 ? 0 : at % (out.length + (how === "insert" ? 1 : 0));
        if (how === "insert") out.splice(i, 0, with_);
        else if (out.length > 0 && how === "delete") out.splice(i, 1);
        else if (out.length > 0) out[i] = with_;
      }
      return out;
    });

// The lines theirs added relative to base (the "+" runs of a line diff), in order.
function addedLines(base: string, theirs: string): string[] {
  const parts = diffArrays(splitLines(base), splitLines(theirs)) ?? [];
  return parts.filter((part) => part.added).flatMap((part) => part.value);
}

function isSubsequence(needles: readonly string[], haystack: readonly string[]): boolean {
  let i = 0;
  for (const line of haystack) if (i < needles.length && line === needles[i]) i++;
  return i === needles.length;
}

describe("three-way merge, properties", () => {
  it("changes on either side of an unchanged line always merge, with both changes", () => {
    const separator = "=== unchanged separator ===\n";
    // Without a final newline, the last line (unchanged on both sides) has none.
    const doc = (parts: readonly string[], noFinalNewline: boolean) =>
      parts.join("") + (noFinalNewline ? "the end" : "");
    fc.assert(
      fc.property(
        lines.chain((head) =>
          lines.chain((tail) => fc.tuple(fc.constant(head), fc.constant(tail), edited(head), edited(tail))),
        ),
        fc.boolean(),
        ([head, tail, oursHead, theirsTail], noFinalNewline) => {
          const base = doc([...head, separator, ...tail], noFinalNewline);
          const ours = doc([...oursHead, separator, ...tail], noFinalNewline);
          const theirs = doc([...head, separator, ...theirsTail], noFinalNewline);
          expect(mergeThreeWay(base, ours, theirs)).toEqual(
            merged(doc([...oursHead, separator, ...theirsTail], noFinalNewline)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("two writers ticking distinct boxes of one checklist (neighbours included) always merge, both ticks kept", () => {
    const checklist = fc
      .array(fc.boolean(), { minLength: 2, maxLength: 30 })
      .chain((ticked) =>
        fc.tuple(
          fc.constant(ticked),
          fc.uniqueArray(fc.nat({ max: ticked.length - 1 }), { minLength: 2, maxLength: 2 }),
          fc.constantFrom("\n", "\r\n"),
          fc.boolean(),
        ),
      );
    fc.assert(
      fc.property(checklist, ([ticked, [i, j], eol, noFinalNewline]) => {
        const doc = (boxes: readonly boolean[]) => {
          const text = ["# Plan" + eol, ...boxes.map((x, k) => `- [${x ? "x" : " "}] item ${k}${eol}`)].join(
            "",
          );
          return noFinalNewline ? text.slice(0, -eol.length) : text;
        };
        const toggled = (...at: number[]) => ticked.map((x, k) => (at.includes(k) ? !x : x));
        const base = doc(ticked);
        for (const [ours, theirs] of [
          [doc(toggled(i as number)), doc(toggled(j as number))],
          [doc(toggled(j as number)), doc(toggled(i as number))],
        ])
          expect(mergeThreeWay(base, ours as string, theirs as string)).toEqual(
            merged(doc(toggled(i as number, j as number))),
          );
      }),
      { numRuns: 500 },
    );
  });

  it("a clean merge keeps every line theirs added, in order; the same sides merge to the same text", () => {
    fc.assert(
      fc.property(
        lines.chain((base) => fc.tuple(fc.constant(base), edited(base), edited(base))),
        fc.boolean(),
        ([base, ours, theirs], noFinalNewline) => {
          const [b, o, t] = [
            text(base, noFinalNewline),
            text(ours, noFinalNewline),
            text(theirs, noFinalNewline),
          ];
          const result = mergeThreeWay(b, o, t);
          if (!result.merged) return;
          expect(isSubsequence(addedLines(b, t), splitLines(result.content))).toBe(true);
          if (o === b) expect(result.content).toBe(t);
          if (t === b) expect(result.content).toBe(o);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("three-way merge in slices (the service's), against the one-piece merge", () => {
  it("gives the same result on random sides of random documents", async () => {
    await fc.assert(
      fc.asyncProperty(
        lines.chain((base) => fc.tuple(fc.constant(base), edited(base), edited(base))),
        fc.boolean(),
        async ([base, ours, theirs], noFinalNewline) => {
          const [b, o, t] = [
            text(base, noFinalNewline),
            text(ours, noFinalNewline),
            text(theirs, noFinalNewline),
          ];
          expect(await mergeThreeWaySliced(b, o, t)).toEqual(mergeThreeWay(b, o, t));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("gives the same answer on sides too different to diff quickly, letting timers run in between", async () => {
    const doc = (letter: string) => Array.from({ length: 1500 }, (_, i) => `${letter} ${i}\n`).join("");
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 0);
    try {
      const sliced = await mergeThreeWaySliced(doc("a"), doc("b"), doc("c"));
      expect(sliced).toEqual(mergeThreeWay(doc("a"), doc("b"), doc("c")));
      expect(sliced.merged).toBe(false);
    } finally {
      clearInterval(ticking);
    }
    expect(ticks).toBeGreaterThan(10); // the merge gave the loop back while it ran
  });
});
