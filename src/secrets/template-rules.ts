import { RE2JS } from "re2js";

/**
 * gitleaks generates about a hundred of its rules from one template (cmd/generate/config/utils):
 *
 *     (?i)[\w.-]{0,50}?(?:NAMES)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)...SECRET...
 *
 * Two facts about it make the scan cheaper with the same findings:
 *
 * - the leading lazy `[\w.-]{0,50}?` only widens the match back over the variable's name; it never
 *   changes the secret (the capture group we report), yet costs re2js about 8x per character. It is
 *   dropped from the searched pattern, and the match's start is widened back over up to 50 of
 *   `[\w.-]` afterwards for the allowlists that look at the whole match (`generic-api-key`'s);
 * - a match needs an assignment operator within 20 + 3 characters of the name, so a keyword hit with
 *   none in `OPERATOR_REACH` characters after it (the name can run a few characters past its
 *   keyword) is not scanned at all: most mentions of "token" or "key" in prose.
 *
 * Only for patterns with no top-level alternation (a second branch, like atlassian's `|\b(ATATT3...)`,
 * would need neither).
 */

const PREFIXES: readonly (readonly [string, string, number])[] = [
  ["(?i)[\\w.-]{0,50}?", "(?i)", 50],
  ["[\\w.-]{0,50}?(?i:[\\w.-]{0,50}?", "(?i:", 100],
];
const OPERATOR_GROUP = "(?:=|>|:{1,3}=|\\|\\||:|=>|\\?=|,)";
/** What follows the name in the template: up to 20 characters of the name's tail, quotes. */
const NAME_END = "(?:[ \\t\\w.-]{0,20})[\\s'\"]{0,3}";

/** Characters after a keyword's end in which a template rule needs its operator (23 + a name's tail). */
export const OPERATOR_REACH = 64;

/** How a rule of the template is run. */
export interface TemplateForm {
  /** The pattern searched, without the leading name prefix. */
  readonly pattern: string;
  /** How many `[\w.-]` characters before a match's start belong to the match (for allowlists). */
  readonly prefixRun: number;
  /** Whether a keyword hit needs an operator in reach to wake the rule. */
  readonly needsOperator: boolean;
}

/**
 * The template form of a pattern, or undefined if it is not one of the template's or if one of its
 * keywords is not its name (new-relic's `nrak`, lob's `test_`: keywords found in the value, after
 * the operator, which the operator check and the narrow window would miss).
 */
export function templateForm(pattern: string, keywords: readonly string[]): TemplateForm | undefined {
  if (!pattern.includes(OPERATOR_GROUP) || hasTopLevelAlternation(pattern)) return undefined;
  for (const [prefix, replacement, run] of PREFIXES) {
    if (!pattern.startsWith(prefix)) continue;
    const rest = pattern.slice(prefix.length);
    const lead = rest.indexOf(NAME_END);
    if (lead <= 0) return undefined;
    const name = RE2JS.compile(`(?i)^(?:${rest.slice(0, lead)})$`);
    if (keywords.length === 0 || !keywords.every((k) => name.matcher(k).find())) return undefined;
    return { pattern: replacement + rest, prefixRun: run, needsOperator: true };
  }
  return undefined;
}

/** Whether a pattern has a `|` outside every group and character class. */
export function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++;
    } else if (c === "(") {
      depth++;
    } else if (c === ")") {
      depth--;
    } else if (c === "|" && depth === 0) {
      return true;
    }
  }
  return false;
}

const OPERATORS = new Set(["=", ">", ":", "|", "?", ","].map((c) => c.charCodeAt(0)));

/** Whether an operator of the template follows `end` within `OPERATOR_REACH` characters. */
export function operatorFollows(text: string, end: number): boolean {
  const limit = Math.min(text.length, end + OPERATOR_REACH);
  for (let i = end; i < limit; i++) {
    if (OPERATORS.has(text.charCodeAt(i))) return true;
  }
  return false;
}

/** Where a match widened back over up to `run` characters of `[\w.-]` starts. */
export function widenBack(text: string, start: number, run: number): number {
  let from = start;
  while (from > 0 && start - from < run && /[\w.-]/.test(text[from - 1]!)) from--;
  return from;
}
