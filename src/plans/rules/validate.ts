import { planErrors } from "../errors";
import { limits } from "./limits";
import { codePointLength } from "../../text/unicode";

/** How an agent write composes the stored plan. */
export type WriteMode = "replace" | "append";

/**
 * Parses a mode exactly and case-sensitively (AC-TASKS-PLAN-APPEND-001.1 to 001.3): "" means
 * replace, "replace" and "append" mean themselves, anything else ("Append", "APPEND", an unknown
 * enum number) is INVALID_WRITE_MODE naming both accepted values. Never falls back to replace:
 * that is how a typo would overwrite a plan with a fragment.
 */
export function parseWriteMode(mode: string): WriteMode {
  if (mode === "" || mode === "replace") return "replace";
  if (mode === "append") return "append";
  throw planErrors.invalidWriteMode(JSON.stringify(mode));
}

// Printable ASCII without spaces: ids travel in logs, metrics-free labels and URLs unescaped.
const ID_PATTERN = /^[\x21-\x7e]+$/;

/** True for a well-formed id: 1 to 128 printable ASCII characters without whitespace. */
export function isWellFormedId(value: string): boolean {
  return value.length > 0 && value.length <= limits.maxIdLength && ID_PATTERN.test(value);
}

/** Checks an id field (task, workspace, session, revision); INVALID_FIELD naming `field`. */
export function requireId(field: string, value: string): string {
  if (value === "") throw planErrors.invalidField(field, "is required");
  if (value.length > limits.maxIdLength) {
    throw planErrors.invalidField(field, `must be at most ${limits.maxIdLength} characters`);
  }
  if (!ID_PATTERN.test(value)) {
    throw planErrors.invalidField(field, "must be printable ASCII without whitespace");
  }
  return value;
}

/** An optional id field: undefined when absent, else checked as requireId does. */
export function optionalId(field: string, value: string | undefined): string | undefined {
  return value === undefined ? undefined : requireId(field, value);
}

// Control characters (Cc: C0, DEL, C1 including U+0085) and the line and paragraph separators
// (U+2028, U+2029): a title is one line of text shown in lists, logs and terminals.
const NOT_IN_TITLES = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/** Checks an optional title: at most 1,000 code points, one line, no control characters. */
export function checkTitle(field: string, title: string | undefined): string | undefined {
  return checkMeasuredTitle(field, title, title === undefined ? 0 : codePointLength(title));
}

/** checkTitle on a title already measured: `chars` is its length in code points (text/unicode.ts). */
export function checkMeasuredTitle(
  field: string,
  title: string | undefined,
  chars: number,
): string | undefined {
  if (title === undefined) return undefined;
  if (chars > limits.maxTitleChars) {
    throw planErrors.invalidField(field, `must be at most ${limits.maxTitleChars} characters`);
  }
  if (NOT_IN_TITLES.test(title)) {
    throw planErrors.invalidField(
      field,
      "must be a single line without control characters or line and paragraph separators",
    );
  }
  return title;
}

/** Checks a display name (author, actor): at most 200 code points. */
export function checkDisplayName(field: string, name: string): string {
  checkMeasuredDisplayName(field, codePointLength(name));
  return name;
}

/** checkDisplayName on a name already measured: `chars` is its length in code points. */
export function checkMeasuredDisplayName(field: string, chars: number): void {
  if (chars > limits.maxAuthorNameChars) {
    throw planErrors.invalidField(field, `must be at most ${limits.maxAuthorNameChars} characters`);
  }
}

/** Checks content size against the plan limit (exactly the limit is accepted). */
export function checkSize(sizeBytes: number): void {
  if (sizeBytes > limits.maxPlanBytes) throw planErrors.planTooLarge(sizeBytes, limits.maxPlanBytes);
}

/** Page size per AIP-158: negative is INVALID_FIELD, 0 means 20, above 100 means 100. */
export function effectivePageSize(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw planErrors.invalidField("page_size", "must not be negative");
  }
  if (pageSize === 0) return limits.defaultPageSize;
  return Math.min(pageSize, limits.maxPageSize);
}
