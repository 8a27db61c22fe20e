/**
 * The Unicode `White_Space` property (PropList.txt), written out code point by code point so the
 * test model does not depend on the product's helper nor on JavaScript's `\s` (which also matches
 * U+FEFF, a character that is *not* whitespace here: DESIGN.md "Whitespace").
 */
export const WHITE_SPACE_CODE_POINTS: readonly number[] = [
  0x0009, // CHARACTER TABULATION
  0x000a, // LINE FEED
  0x000b, // LINE TABULATION
  0x000c, // FORM FEED
  0x000d, // CARRIAGE RETURN
  0x0020, // SPACE
  0x0085, // NEXT LINE (NEL)
  0x00a0, // NO-BREAK SPACE
  0x1680, // OGHAM SPACE MARK
  0x2000, // EN QUAD
  0x2001, // EM QUAD
  0x2002, // EN SPACE
  0x2003, // EM SPACE
  0x2004, // THREE-PER-EM SPACE
  0x2005, // FOUR-PER-EM SPACE
  0x2006, // SIX-PER-EM SPACE
  0x2007, // FIGURE SPACE
  0x2008, // PUNCTUATION SPACE
  0x2009, // THIN SPACE
  0x200a, // HAIR SPACE
  0x2028, // LINE SEPARATOR
  0x2029, // PARAGRAPH SEPARATOR
  0x202f, // NARROW NO-BREAK SPACE
  0x205f, // MEDIUM MATHEMATICAL SPACE
  0x3000, // IDEOGRAPHIC SPACE
];

const WHITE_SPACE = new Set(WHITE_SPACE_CODE_POINTS);

/** True when the code point has the Unicode White_Space property. */
export function isWhiteSpaceCodePoint(codePoint: number): boolean {
  return WHITE_SPACE.has(codePoint);
}

/** True when every code point of `text` is White_Space (also for the empty string). */
export function isAllWhiteSpace(text: string): boolean {
  for (const char of text) if (!WHITE_SPACE.has(char.codePointAt(0) ?? -1)) return false;
  return true;
}
