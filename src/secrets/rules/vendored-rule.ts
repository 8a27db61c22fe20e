/**
 * The shape of a rule set the secret scanner loads: gitleaks' configuration format (its TOML keys,
 * as data), so that its default rules are vendored unchanged and our own rules read the same way.
 * Regexes are RE2 syntax (Go's `regexp`), run by re2js in linear time (docs/secrets.md).
 */

/** An allowlist: a candidate it matches is not a finding (gitleaks' `[[rules.allowlists]]`). */
export interface VendoredAllowlist {
  /** "OR" (default: any check allows) or "AND" (every check present must allow). */
  readonly condition?: "OR" | "AND";
  /** What the regexes run on: the secret (default), the whole match, or the match's line(s). */
  readonly regexTarget?: "secret" | "match" | "line";
  readonly regexes?: readonly string[];
  /** Allowed when the lower-cased secret contains one of these. */
  readonly stopwords?: readonly string[];
  /** File path regexes: a plan has no path, so a check on paths never allows. */
  readonly paths?: readonly string[];
}

/** One detection rule (gitleaks' `[[rules]]`). */
export interface VendoredRule {
  /** Stable id, the finding's `rule` (for example `aws-access-token`). */
  readonly id: string;
  readonly description: string;
  /** RE2 pattern; absent for a rule on file names only (not run on plans). */
  readonly regex?: string;
  /** Which capture group is the secret; absent: the first non-empty group, or the whole match. */
  readonly secretGroup?: number;
  /** A candidate whose secret's Shannon entropy (bits per character) is at most this is dropped. */
  readonly entropy?: number;
  /** The rule runs only near one of these (case-insensitive): gitleaks' pre-filter. */
  readonly keywords?: readonly string[];
  /** File path regex: a rule with a path targets files, never plan text, and is not run. */
  readonly path?: string;
  readonly allowlists?: readonly VendoredAllowlist[];
}

/** A rule set with where it comes from. */
export interface VendoredRuleSet {
  readonly source: string;
  readonly version: string;
  readonly commit?: string;
  /** Applies to every rule of the set (gitleaks' global `[allowlist]`). */
  readonly allowlist: VendoredAllowlist;
  readonly rules: readonly VendoredRule[];
}
