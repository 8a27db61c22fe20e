/**
 * Text measurement and the one whitespace definition shared by validation and composition.
 *
 * Whitespace is Unicode `White_Space` (includes U+0085, U+00A0, U+2028, U+3000; excludes U+200B and
 * U+FEFF), as REQ-TASKS-PLAN-APPEND's terminology requires: a `" \t\r\n"` cutset does not satisfy it.
 */

const WHITE_SPACE = /^\p{White_Space}$/u;
const NON_WHITE_SPACE = /\P{White_Space}/u;

/** True when the single code point `ch` has the Unicode `White_Space` property. */
export function isWhitespace(ch: string): boolean {
  return WHITE_SPACE.test(ch);
}

/** True when `text` holds no character other than whitespace (the empty string included). */
export function isBlank(text: string): boolean {
  return !NON_WHITE_SPACE.test(text);
}

/** `text` without its trailing whitespace. Linear: walks back from the end one code point at a time. */
export function trimTrailingWhitespace(text: string): string {
  let end = text.length;
  while (end > 0) {
    const low = text.charCodeAt(end - 1);
    // An astral code point ends with a low surrogate; step back over the whole pair.
    const width =
      low >= 0xdc00 && low <= 0xdfff && end >= 2 && isHighSurrogate(text.charCodeAt(end - 2)) ? 2 : 1;
    if (!isWhitespace(text.slice(end - width, end))) break;
    end -= width;
  }
  return text.slice(0, end);
}

/**
 * Code points and UTF-8 bytes of `text` without its trailing whitespace: what an append keeps of a
 * stored text (recorded with every plan, so that the database can compose without reading it).
 */
export function trimmedLengths(text: string): {
  readonly trimmedChars: number;
  readonly trimmedBytes: number;
} {
  const trimmed = trimTrailingWhitespace(text);
  return { trimmedChars: codePointLength(trimmed), trimmedBytes: utf8Length(trimmed) };
}

/** Number of Unicode code points in `text` (a lone surrogate counts as one). */
export function codePointLength(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** Size of `text` in UTF-8 bytes, the unit of the plan size limit. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
