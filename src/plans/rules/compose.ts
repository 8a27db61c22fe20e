import { codePointLength, isBlank, trimTrailingWhitespace, utf8Length } from "../../text/unicode";

/**
 * Composes an append: the stored document, one blank line, then the fragment
 * (AC-TASKS-PLAN-APPEND-002.1 to 002.5, algorithm of the system design's "Separator normalization").
 *
 * 1. S' = stored without trailing whitespace (002.5 allows dropping it).
 * 2. F' = fragment without its leading empty or whitespace-only lines; the first line with a
 *    non-whitespace character is kept verbatim, leading spaces and tabs included (002.2, 002.3).
 * 3. S' empty: F'. Otherwise S' + "\n\n" + F' (exactly one empty line, 002.2).
 * Nothing is added after the fragment and no interior character is examined (002.1, 002.4).
 */
export function composeAppend(stored: string, fragment: string): string {
  const head = trimTrailingWhitespace(stored);
  const tail = dropLeadingBlankLines(fragment);
  return head === "" ? tail : `${head}\n\n${tail}`;
}

/**
 * `fragment` without its leading lines that are empty or whitespace-only. A line ends at "\n"; a "\r"
 * before it is whitespace, so CRLF lines are handled. A last line with no terminator is kept as is.
 */
export function dropLeadingBlankLines(fragment: string): string {
  let start = 0;
  for (;;) {
    const newline = fragment.indexOf("\n", start);
    if (newline === -1) return fragment.slice(start);
    if (!isBlank(fragment.slice(start, newline))) return fragment.slice(start);
    start = newline + 1;
  }
}

/** What the stored content's trimmed lengths are (recorded at every content write). */
export interface TrimmedLengths {
  readonly trimmedChars: number;
  readonly trimmedBytes: number;
}

/**
 * The same append as composeAppend, for the database to carry out without the stored text being
 * read: keep the stored content's first `trimmedChars` code points (S'), then add the separator and
 * F'. Returns what to store and the sizes of the result, equal to those of composeAppend's result.
 */
export function composeAppendInStore(
  stored: TrimmedLengths,
  fragment: string,
): {
  readonly change: { readonly keepChars: number; readonly keepBytes: number; readonly suffix: string };
  readonly bytes: number;
  readonly chars: number;
  readonly trimmedBytes: number;
  readonly trimmedChars: number;
} {
  const tail = dropLeadingBlankLines(fragment);
  const suffix = stored.trimmedChars === 0 ? tail : `\n\n${tail}`;
  const suffixBytes = utf8Length(suffix);
  const suffixChars = codePointLength(suffix);
  const trailing = tail.slice(trimTrailingWhitespace(tail).length);
  const trailingBytes = utf8Length(trailing);
  const trailingChars = codePointLength(trailing);
  return {
    change: { keepChars: stored.trimmedChars, keepBytes: stored.trimmedBytes, suffix },
    bytes: stored.trimmedBytes + suffixBytes,
    chars: stored.trimmedChars + suffixChars,
    trimmedBytes: stored.trimmedBytes + suffixBytes - trailingBytes,
    trimmedChars: stored.trimmedChars + suffixChars - trailingChars,
  };
}
