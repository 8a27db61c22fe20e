/**
 * Cheap necessary conditions a keyword hit must meet before it wakes a rule, for the rules whose
 * keywords are common words of plan text. gitleaks' `generic-api-key` wakes on access, api, auth,
 * key, credential, password, secret and token, found on most lines of a technical plan; its regex
 * needs, after that word and at most 20 characters of `[ \t\w.-]` and 3 of `[\s'"]`, an assignment
 * operator (`=`, `>`, `:`, `|`, `?=`, `,`). A hit with no operator in reach cannot be part of a
 * match, so its window is not scanned: the same findings for a fraction of the regex work.
 */

/** Characters after a keyword's end in which `generic-api-key` needs its operator (20 + 3 + 1, rounded up). */
export const GENERIC_OPERATOR_REACH = 32;

/** Whether the hit ending at `end` can start a match of its rule (rules without a gate: always). */
export type HitGate = (text: string, end: number) => boolean;

const OPERATORS = new Set(["=", ">", ":", "|", "?", ","].map((c) => c.charCodeAt(0)));

function operatorFollows(text: string, end: number): boolean {
  const limit = Math.min(text.length, end + GENERIC_OPERATOR_REACH);
  for (let i = end; i < limit; i++) {
    if (OPERATORS.has(text.charCodeAt(i))) return true;
  }
  return false;
}

const GATES: Readonly<Record<string, HitGate>> = Object.freeze({
  "generic-api-key": operatorFollows,
});

/** The gate of a rule, if it has one. */
export function gateOf(ruleId: string): HitGate | undefined {
  return GATES[ruleId];
}
