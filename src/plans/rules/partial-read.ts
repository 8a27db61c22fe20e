import { planErrors } from "../errors";
import { limits } from "./limits";
import { codePointLength } from "../../text/unicode";

/** A range of a document, in code points. */
export interface ContentRange {
  readonly content: string;
  readonly totalChars: number;
  readonly nextOffset: number | null;
  readonly hasMore: boolean;
}

/**
 * The code points [offset, offset + limit) of `text`. Offsets count code points, so a range never
 * splits a surrogate pair (it may split a combining sequence). Offset past the end is
 * OFFSET_OUT_OF_RANGE; offset equal to the length returns empty; limit must be 1..65,536.
 */
export function readRange(text: string, offset: number | undefined, limit: number | undefined): ContentRange {
  const totalChars = codePointLength(text);
  const from = offset ?? 0;
  if (limit !== undefined && (limit < 1 || limit > limits.maxReadChars)) {
    throw planErrors.invalidField("limit", `must be between 1 and ${limits.maxReadChars}`);
  }
  if (from > totalChars) throw planErrors.offsetOutOfRange(from, totalChars);
  const to = limit === undefined ? totalChars : Math.min(totalChars, from + limit);
  const start = unitIndex(text, from);
  const content = text.slice(start, unitIndex(text, to - from, start));
  const hasMore = to < totalChars;
  return { content, totalChars, nextOffset: hasMore ? to : null, hasMore };
}

// UTF-16 index of the code point `count` code points after `from`.
function unitIndex(text: string, count: number, from = 0): number {
  let index = from;
  for (let seen = 0; seen < count && index < text.length; seen++) {
    const code = text.charCodeAt(index);
    const pair =
      code >= 0xd800 && code <= 0xdbff && index + 1 < text.length && isLow(text.charCodeAt(index + 1));
    index += pair ? 2 : 1;
  }
  return index;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
