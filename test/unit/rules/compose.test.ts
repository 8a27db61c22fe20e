import { composeAppend, composeAppendInStore, dropLeadingBlankLines } from "../../../src/plans/rules/compose";
import { trimTrailingWhitespace } from "../../../src/text/unicode";
import { expectedAppend } from "../../harness/jepsen/append-oracle";

// Expected values are S' + "\n\n" + F' (system design, "Separator normalization"), never S + F.
describe("append composition (AC-TASKS-PLAN-APPEND-002)", () => {
  it.each([
    ["AC-TASKS-PLAN-APPEND-002.2: stored ends with no newline", "previous", "## New", "previous\n\n## New"],
    [
      "AC-TASKS-PLAN-APPEND-002.2: stored ends with one newline",
      "previous\n",
      "## New",
      "previous\n\n## New",
    ],
    [
      "AC-TASKS-PLAN-APPEND-002.2: stored ends with several newlines",
      "previous\n\n\n\n",
      "## New",
      "previous\n\n## New",
    ],
    ["AC-TASKS-PLAN-APPEND-002.2: stored ends with CRLF", "previous\r\n\r\n", "## New", "previous\n\n## New"],
    [
      "AC-TASKS-PLAN-APPEND-002.2: fragment begins with blank lines",
      "previous",
      "\n\n\n## New",
      "previous\n\n## New",
    ],
    [
      "AC-TASKS-PLAN-APPEND-002.2: fragment begins with a whitespace-only line",
      "previous",
      " \n## New",
      "previous\n\n## New",
    ],
    [
      "AC-TASKS-PLAN-APPEND-002.2: fragment begins with CRLF blank lines",
      "previous",
      "\r\n \t\r\n## New",
      "previous\n\n## New",
    ],
    [
      "AC-TASKS-PLAN-APPEND-002.2: leading spaces of the first non-empty line are kept",
      "previous",
      "\n    code",
      "previous\n\n    code",
    ],
    ["AC-TASKS-PLAN-APPEND-002.2: leading tab kept", "previous", "\t- item", "previous\n\n\t- item"],
    [
      "AC-TASKS-PLAN-APPEND-002.2: NBSP-only first line is whitespace",
      "previous",
      "\u00a0\n## New",
      "previous\n\n## New",
    ],
    [
      "AC-TASKS-PLAN-APPEND-002.2: U+200B line is content, not whitespace",
      "previous",
      "\u200b\n## New",
      "previous\n\n\u200b\n## New",
    ],
    ["AC-TASKS-PLAN-APPEND-002.3: empty stored content", "", "\n\n## New", "## New"],
    ["AC-TASKS-PLAN-APPEND-002.3: whitespace-only stored content", " \n\t\u3000\n", "  ## New", "  ## New"],
    ["AC-TASKS-PLAN-APPEND-002.4: trailing newline of the fragment kept", "a", "b\n", "a\n\nb\n"],
    ["AC-TASKS-PLAN-APPEND-002.4: no trailing newline added", "a", "b", "a\n\nb"],
    [
      "AC-TASKS-PLAN-APPEND-002.4: trailing spaces and CRLF of the fragment kept",
      "a",
      "b  \r\n\r\n",
      "a\n\nb  \r\n\r\n",
    ],
    [
      "AC-TASKS-PLAN-APPEND-002.5: interior of the stored content untouched",
      "a\n\n\n\nb  \n  c",
      "d",
      "a\n\n\n\nb  \n  c\n\nd",
    ],
    [
      "AC-TASKS-PLAN-APPEND-002.5: trailing Unicode whitespace dropped",
      "a\u00a0\u3000\u2028\u0085",
      "b",
      "a\n\nb",
    ],
    ["AC-TASKS-PLAN-APPEND-002.5: trailing U+FEFF is content and kept", "a\ufeff", "b", "a\ufeff\n\nb"],
    [
      "AC-TASKS-PLAN-APPEND-002.1: interior of the fragment untouched",
      "a",
      "x\n\n\n  y \r\nz",
      "a\n\nx\n\n\n  y \r\nz",
    ],
    ["astral characters at both edges survive", "a😀\n", "😀b", "a😀\n\n😀b"],
  ])("%s", (_id, stored, fragment, composed) => {
    expect(composeAppend(stored, fragment)).toBe(composed);
  });

  it("AC-TASKS-PLAN-APPEND-002.1: composed == S' + separator + F', for a property sample", () => {
    const pieces = ["", "a", " ", "\n", "\r\n", "\u00a0", "## h", "  x", "\t", "😀", "\u200b"];
    for (const s1 of pieces)
      for (const s2 of pieces)
        for (const f1 of pieces)
          for (const f2 of pieces) {
            const stored = s1 + s2;
            const fragment = f1 + f2;
            const head = trimTrailingWhitespace(stored);
            const tail = dropLeadingBlankLines(fragment);
            const expected = head === "" ? tail : `${head}\n\n${tail}`;
            expect(composeAppend(stored, fragment)).toBe(expected);
            // The stored body before its trailing whitespace is a prefix of the result (002.5).
            expect(composeAppend(stored, fragment).startsWith(head)).toBe(true);
          }
  });
});

describe("the append the database composes (composeAppendInStore) equals composeAppend", () => {
  const stored = [
    "",
    "   \n\t ",
    "# Plan",
    "# Plan\n",
    "# Plan\r\n\r\n",
    "# Plan\u3000\u0085\u00a0",
    "tail with zero-width space\u200b",
    "BOM is not whitespace\ufeff",
    "😀 astral 𝒳\n\n",
    "ünïcödé\u2028",
    "a\u0000b", // SQLite's text functions stop at NUL: the store cuts bytes
    "\u0000\u0001\u001f\u007f\u0085\u009f\n",
  ];
  const fragments = ["x", "\n\n## F\n", "  \n\t\n  indented\n", "😀\u3000", "a\r\nb\r\n", "\u2029\nlast\n  "];
  const keep = (text: string, chars: number) => [...text].slice(0, chars).join("");

  it.each(stored.flatMap((s) => fragments.map((f) => [s, f])))("stored %j + fragment %j", (s, f) => {
    const trimmed = trimTrailingWhitespace(s);
    const inStore = composeAppendInStore(
      { trimmedChars: [...trimmed].length, trimmedBytes: Buffer.byteLength(trimmed) },
      f,
    );
    const expected = composeAppend(s, f);
    // What the databases do with the change: MySQL's LEFT(content, keepChars) + suffix, SQLite's
    // first keepBytes bytes + suffix.
    expect(keep(s, inStore.change.keepChars) + inStore.change.suffix).toBe(expected);
    const bytes = Buffer.from(s, "utf8").subarray(0, inStore.change.keepBytes).toString("utf8");
    expect(bytes + inStore.change.suffix).toBe(expected);
    expect(inStore).toMatchObject({
      bytes: Buffer.byteLength(expected),
      chars: [...expected].length,
      trimmedBytes: Buffer.byteLength(trimTrailingWhitespace(expected)),
      trimmedChars: [...trimTrailingWhitespace(expected)].length,
    });
  });
});

describe("the fault checker's independent append oracle", () => {
  it("agrees with composeAppend on the seed examples and on random texts of whitespace and letters", () => {
    const pieces = [
      "a",
      "b",
      " ",
      "\t",
      "\n",
      "\r\n",
      "\u00a0",
      "\u0085",
      "\u2028",
      "\u3000",
      "\u200b",
      "\ufeff",
      "😀",
    ];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const text = () =>
      Array.from(
        { length: Math.floor(random() * 8) },
        () => pieces[Math.floor(random() * pieces.length)],
      ).join("");
    const cases: [string, string][] = [
      ["# Plan\n", "## Next\n"],
      ["", "\n\n  first"],
      ["x \n\t", " \n\n- item"],
      ["x", "   "],
    ];
    for (let i = 0; i < 2000; i++) cases.push([text(), text()]);
    for (const [stored, fragment] of cases)
      expect([stored, fragment, expectedAppend(stored, fragment)]).toEqual([
        stored,
        fragment,
        composeAppend(stored, fragment),
      ]);
  });

  it("differs from a wrong rule, so the comparison means something", () => {
    expect(expectedAppend("a \n", "b")).not.toBe("a \n\n\nb");
    expect(expectedAppend("a", "\u200bb")).toBe("a\n\n\u200bb"); // U+200B is not White_Space
  });
});
