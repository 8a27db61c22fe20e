import fc from "fast-check";
import { WHITE_SPACE_CODE_POINTS } from "./unicode-white-space";

/**
 * Generators of hostile plan text for the differential test: NUL and every C0/C1 control, every
 * Unicode White_Space character, U+200B, U+FEFF, U+FFFF, CR/LF/CRLF, combining marks, astral
 * characters up to U+10FFFF, right-to-left text, and (see `SizedText`) sizes at the 262,144-byte
 * limit. Never a lone surrogate: protobuf strings are UTF-8, and the client would send U+FFFD.
 */

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i));

/** Every C0 control, DEL and every C1 control (U+0085 NEL is also White_Space). */
export const CONTROLS: readonly string[] = [...range(0x00, 0x1f), "\u007f", ...range(0x80, 0x9f)];
export const WHITE_SPACE: readonly string[] = WHITE_SPACE_CODE_POINTS.map((c) => String.fromCodePoint(c));
/** Characters that look blank or special but are not White_Space, line breaks, marks, astral, RTL. */
export const SPECIALS: readonly string[] = [
  "\u0000",
  "\u200b",
  "\ufeff",
  "\uffff",
  "\ufffe",
  "\r\n",
  "\r",
  "\n",
  "\u0301",
  "\u0308",
  "\u20dd",
  "\u0489",
  "\u{1f600}",
  "\u{10000}",
  "\u{1d11e}",
  "\u{e0001}",
  "\u{10ffff}",
  "\u200f",
  "\u202e",
  "\u2067",
  "\u2069",
];
/** Words and Markdown pieces, so edits find unique and repeated texts and appends see headings. */
export const WORDS: readonly string[] = [
  "## Heading",
  "# Plan",
  "- [ ] step",
  "- [x] done",
  "    code",
  "\t- item",
  "plan",
  "a",
  "aa",
  "x",
  "e\u0301",
  "猫",
  "שלום עולם",
  "مرحبا",
  "a\u0000b",
  "😀",
];

const anyCodePoint = fc
  .integer({ min: 0, max: 0x10ffff })
  .filter((c) => c < 0xd800 || c > 0xdfff)
  .map((c) => String.fromCodePoint(c));

const piece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 3, arbitrary: fc.constantFrom(...SPECIALS) },
  { weight: 2, arbitrary: fc.constantFrom(...WHITE_SPACE) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTROLS) },
  { weight: 1, arbitrary: anyCodePoint },
);

/** Hostile text of up to `maxPieces` pieces (may be empty). */
export function hostileText(maxPieces = 16): fc.Arbitrary<string> {
  return fc.array(piece, { maxLength: maxPieces }).map((pieces) => pieces.join(""));
}

const blankLine = fc
  .array(fc.constantFrom(" ", "\t", "\u00a0", "\u3000", "\u0085", "\u2028"), { maxLength: 3 })
  .chain((chars) => fc.constantFrom(`${chars.join("")}\n`, `${chars.join("")}\r\n`));

/** Text with whitespace and blank lines at its edges (what the append rule trims and keeps). */
export function edgedText(): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.array(blankLine, { maxLength: 3 }),
      fc.constantFrom("", " ", "  ", "\t"),
      hostileText(),
      fc.array(fc.constantFrom(...WHITE_SPACE, "\r\n"), { maxLength: 4 }),
    )
    .map(([lines, indent, body, trailing]) => `${lines.join("")}${indent}${body}${trailing.join("")}`);
}

/** Plan text: mostly hostile, sometimes with edges, sometimes empty or whitespace only. */
export function planText(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: hostileText() },
    { weight: 3, arbitrary: edgedText() },
    {
      weight: 1,
      arbitrary: fc.array(fc.constantFrom(...WHITE_SPACE), { maxLength: 4 }).map((w) => w.join("")),
    },
  );
}

/**
 * Content whose *resulting document* has a chosen size, resolved when the step runs (the size of
 * what the step composes with is only known then): `bytes` = 262,144 + delta UTF-8 bytes, `chars`
 * = that many code points, `half` = half the current plan's code points + delta (the reduction
 * guard's boundary). The filler is one character repeated (1 to 4 UTF-8 bytes), then `tail`.
 */
export type SizedText =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "bytes"; readonly delta: number; readonly fill: string; readonly tail: string }
  | { readonly kind: "chars"; readonly count: number; readonly fill: string; readonly tail: string }
  | { readonly kind: "half"; readonly delta: number; readonly fill: string; readonly tail: string };

const fill = fc.constantFrom("x", "é", "猫", "😀", "\u0000");

/** Text, or a document sized at the limit or at the reduction guard's thresholds. */
export function sizedText(text: fc.Arbitrary<string> = planText()): fc.Arbitrary<SizedText> {
  // Cross-shrinking lets a failing sized text shrink to a plain one when that still fails.
  return fc.oneof(
    { withCrossShrink: true },
    { weight: 8, arbitrary: text.map((t) => ({ kind: "text" as const, text: t })) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("bytes" as const),
        delta: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -5000, max: 5000 })),
        fill,
        tail: hostileText(4),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("chars" as const),
        count: fc.constantFrom(1_999, 2_000, 2_001, 4_000, 4_001),
        fill,
        tail: hostileText(4),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("half" as const),
        delta: fc.integer({ min: -2, max: 2 }),
        fill,
        tail: hostileText(4),
      }),
    },
  );
}
