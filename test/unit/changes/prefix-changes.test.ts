import { composeAppend, composeAppendInStore } from "../../../src/plans/rules/compose";
import { wholeContent } from "../../../src/plans/writes/content-commit";
import {
  type ChangeContent,
  changeContentOf,
  codePointPrefix,
  type ReadChange,
  resolvePrefixes,
} from "../../../src/storage/devices/prefix-changes";
import type { ContentChange, HeadWrite, StoredChange } from "../../../src/plans/ports/records";

// An append's change row keeps no copy of the plan: its content is derived from the next version's.
// These tests compose real appends and check that every version's content comes back exactly.

const headOf = (content: ContentChange, sizes: ReturnType<typeof wholeContent>, deleted = false) =>
  ({
    content,
    contentChars: sizes.chars,
    contentBytes: sizes.bytes,
    trimmedChars: sizes.trimmedChars,
    trimmedBytes: sizes.trimmedBytes,
    deleted,
  }) as unknown as HeadWrite;

const change = (version: number, step: 0 | 1 = 0, content: string | null = null): StoredChange =>
  ({
    taskId: "t",
    version,
    step,
    kind: step === 1 ? "implementation_started" : "updated",
    content,
  }) as StoredChange;

/** Appends `fragments` in turn to `start`, as the database composes them: each version's content and row. */
function appendAll(start: string, fragments: readonly string[]) {
  let content = start;
  const versions: { content: string; row: ChangeContent }[] = [];
  for (const fragment of fragments) {
    const measured = wholeContent(content);
    const composed = composeAppendInStore(measured, fragment);
    content = composeAppend(content, fragment);
    versions.push({
      content,
      row: changeContentOf(headOf(composed.change, { ...composed, change: content })),
    });
  }
  return versions;
}

const asRead = (version: number, row: ChangeContent, copy: string | null = null): ReadChange => ({
  change: change(version, 0, copy),
  prefix: row.form === "prefix" ? { keptChars: row.keptChars, tail: row.tail } : null,
});

// A small deterministic generator: fragments with leading blank lines, trailing whitespace of
// several kinds (U+00A0, U+3000, CRLF) and astral characters.
function fragments(seed: number, count: number): string[] {
  let state = seed;
  const next = (n: number) => (state = (state * 1103515245 + 12345) % 2 ** 31) % n;
  const pieces = ["word", "😀", "é", "\t- item", "## Step", "x y", "\u3000z"];
  const lead = ["", "\n", " \n\n", "\r\n"];
  const trail = ["", "\n", "\n\n", " ", "\u00a0", "\u3000\n", "\r\n"];
  return Array.from({ length: count }, () => {
    const body = Array.from({ length: 1 + next(4) }, () => pieces[next(pieces.length)]).join(" ");
    return `${lead[next(lead.length)]}${body}${trail[next(trail.length)]}`;
  });
}

describe("changeContentOf (how a change row holds the content after it)", () => {
  it("an append composed by the database: the kept code points and the trailing whitespace", () => {
    const composed = composeAppendInStore({ trimmedChars: 4, trimmedBytes: 4 }, "\n\nnext 😀\n \n");
    expect(changeContentOf(headOf(composed.change, { ...composed, change: "" }))).toEqual({
      form: "prefix",
      keptChars: composed.trimmedChars,
      tail: "\n \n",
    });
  });

  it("a whole content is copied, a deletion has none", () => {
    const whole = wholeContent("# Plan\n");
    expect(changeContentOf(headOf("# Plan\n", whole))).toEqual({ form: "head" });
    expect(changeContentOf(headOf("", wholeContent(""), true))).toEqual({ form: "none" });
  });

  it("copies when the recorded sizes do not describe the composition", () => {
    const composed = composeAppendInStore({ trimmedChars: 4, trimmedBytes: 4 }, "next");
    const sizes = { ...composed, change: "", chars: composed.chars + 1 };
    expect(changeContentOf(headOf(composed.change, sizes))).toEqual({ form: "head" });
    const blank = { keepChars: 4, keepBytes: 4, suffix: "\n\n " };
    expect(changeContentOf(headOf(blank, { ...composed, change: "" }))).toEqual({ form: "head" });
  });
});

describe("resolvePrefixes (an append's content from the next version's)", () => {
  it.each([1, 2, 3, 4, 5])("gives every version of 40 appends its exact content (seed %i)", (seed) => {
    const versions = appendAll("# Plan \u00a0\n", fragments(seed, 40));
    const rows = versions.map((v, i) => asRead(i + 1, v.row));
    expect(versions.every((v) => v.row.form === "prefix")).toBe(true);
    const head = versions.at(-1)?.content ?? "";
    expect(resolvePrefixes(rows, head).map((c) => c.content)).toEqual(versions.map((v) => v.content));
  });

  it("derives from a copy made later (before a replace) and from a mark of the same version", () => {
    const versions = appendAll("", fragments(7, 6));
    const content = (i: number) => versions[i]?.content ?? "";
    const rows: ReadChange[] = [
      asRead(1, versions[0]!.row),
      asRead(2, versions[1]!.row),
      asRead(3, versions[2]!.row, content(2)), // copied before version 4 replaced the content
      { change: change(4, 0, "replaced"), prefix: null },
      asRead(5, appendAll("replaced", ["more"])[0]!.row),
      { change: change(5, 1, composeAppend("replaced", "more")), prefix: null }, // the mark copies HEAD
    ];
    expect(resolvePrefixes(rows, null).map((c) => c.content)).toEqual([
      content(0),
      content(1),
      content(2),
      "replaced",
      composeAppend("replaced", "more"),
      composeAppend("replaced", "more"),
    ]);
  });

  it("gives no content across a missing version, a deletion, or a replace that did not copy", () => {
    const versions = appendAll("start", fragments(9, 4));
    const prefix = (i: number) => versions[i]!.row;
    const head = versions[3]!.content;
    const gap = resolvePrefixes([asRead(1, prefix(0)), asRead(3, prefix(2)), asRead(4, prefix(3))], head);
    expect(gap.map((c) => c.content)).toEqual([null, versions[2]!.content, head]);
    const deleted = resolvePrefixes([asRead(1, prefix(0)), { change: change(2), prefix: null }], null);
    expect(deleted[0]?.content).toBeNull();
    const uncopied = resolvePrefixes(
      [asRead(1, prefix(0)), { change: change(2, 0, "other"), prefix: null }],
      null,
    );
    expect(uncopied.map((c) => c.content)).toEqual([null, "other"]);
    expect(resolvePrefixes([asRead(1, prefix(0))], null)[0]?.content).toBeNull();
  });
});

describe("codePointPrefix", () => {
  it("counts an astral character as one code point", () => {
    expect(codePointPrefix("a😀b", 2)).toBe("a😀");
    expect(codePointPrefix("a😀b", 1)).toBe("a");
    expect(codePointPrefix("ab", 5)).toBe("ab");
    expect(codePointPrefix("\ud800x", 1)).toBe("\ud800");
  });
});
