/**
 * A credential the scanner found, described without its text: which rule and where. Nothing built
 * from a finding (an error, a log line, a metric label) can leak the secret, because the finding
 * never holds it.
 *
 * Offsets are UTF-16 code units of the scanned string (JavaScript string indexes: `text.slice(start,
 * end)` is the secret), `start` inclusive and `end` exclusive. They cover the secret itself (the
 * rule's secret group), which may be narrower than the text the rule matched (`password = "..."`).
 */
export interface SecretFinding {
  /** The rule's stable id (gitleaks' rule id, or ours): `aws-access-token`, `private-key`. */
  readonly rule: string;
  /** What the rule finds and why it matters, in the rule set's words. */
  readonly description: string;
  readonly start: number;
  readonly end: number;
  /** 1-based line of `start` in the scanned text. */
  readonly line: number;
}

/**
 * A finding as one line for an error message or a log: the rule, the line and the range, never the
 * secret. `what` names the scanned text ("the appended text", "the plan").
 */
export function describeFinding(finding: SecretFinding, what = "the text"): string {
  const length = finding.end - finding.start;
  return (
    `possible secret (rule ${finding.rule}) in ${what} at line ${finding.line}, ` +
    `characters ${finding.start}-${finding.end} (${length} long)`
  );
}
