import { RE2JS } from "re2js";
import { KeywordAutomaton } from "./keyword-automaton";
import type { VendoredAllowlist } from "./rules/vendored-rule";

/** What an allowlist looks at for one candidate (gitleaks' `checkFindingAllowed`). */
export interface AllowlistCandidate {
  readonly secret: string;
  /** The whole match (lazily: only allowlists on the match read it). */
  readonly match: () => string;
  /** The line(s) holding the match, clipped around it (`LINE_TARGET_REACH`). */
  readonly line: () => string;
}

/**
 * Characters of the match's line kept on each side for a `regexTarget = "line"` allowlist: a long
 * line holding many candidates would otherwise be re-read whole for each (quadratic).
 */
export const LINE_TARGET_REACH = 512;

/** An allowlist, compiled once: `allows` says whether a candidate is not a finding. */
export class CompiledAllowlist {
  private readonly regexes: readonly RE2JS[];
  private readonly stopwords: KeywordAutomaton | undefined;
  private readonly target: "secret" | "match" | "line";
  private readonly all: boolean;
  private readonly hasPaths: boolean;

  constructor(source: VendoredAllowlist) {
    this.regexes = (source.regexes ?? []).map((r) => RE2JS.compile(r));
    this.stopwords =
      source.stopwords && source.stopwords.length > 0 ? new KeywordAutomaton(source.stopwords) : undefined;
    this.target = source.regexTarget ?? "secret";
    this.all = source.condition === "AND";
    this.hasPaths = (source.paths ?? []).length > 0;
  }

  /** Whether `candidate` is allowed (gitleaks' semantics, minus file paths and commits). */
  allows(candidate: AllowlistCandidate): boolean {
    const stopword = () => this.stopwords?.containsAny(candidate.secret) === true;
    const regex = () => {
      if (this.regexes.length === 0) return false;
      const target =
        this.target === "line"
          ? candidate.line()
          : this.target === "match"
            ? candidate.match()
            : candidate.secret;
      return this.regexes.some((r) => r.matcher(target).find());
    };
    if (!this.all) return regex() || stopword();
    // AND: every check the allowlist has must allow; a plan has no path, so a path check never does.
    if (this.hasPaths) return false;
    if (this.regexes.length > 0 && !regex()) return false;
    if (this.stopwords !== undefined && !stopword()) return false;
    return this.regexes.length > 0 || this.stopwords !== undefined;
  }
}
