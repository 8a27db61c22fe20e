/**
 * Secret detection on plan text (issue 61, item 3): a pure, synchronous scanner, linear in the text,
 * running gitleaks' default rule set (vendored, pinned) and ours with re2js. See docs/secrets.md.
 */
import { defaultRuleSet } from "./compiled-rules";

export { scanForSecrets, type ScanOptions } from "./scan-for-secrets";
export { describeFinding, type SecretFinding } from "./secret-finding";

/**
 * Compiles the default rules now (about a third of a second) instead of on the first write, and
 * says which rule sets run: `gitleaks v8.30.1 + taskplans 1` (for the start-up log line).
 */
export function prepareSecretScanner(): { version: string; rules: number } {
  const set = defaultRuleSet();
  return { version: set.version, rules: set.rules.length };
}

/** The ids of the rules the scanner runs, in order (docs/secrets.md lists them; a test checks). */
export function secretRuleIds(): string[] {
  return defaultRuleSet().rules.map((rule) => rule.id);
}
