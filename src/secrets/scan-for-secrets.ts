import type { CompiledRule, CompiledRuleSet } from "./compiled-rules";
import { defaultRuleSet } from "./compiled-rules";
import { LINE_TARGET_REACH, type AllowlistCandidate } from "./compiled-allowlist";
import { LineIndex, WindowCollector } from "./scan-windows";
import type { SecretFinding } from "./secret-finding";
import { shannonEntropy } from "./shannon-entropy";
import { operatorFollows, widenBack } from "./template-rules";

/** Options of one scan. */
export interface ScanOptions {
  /**
   * Stop after this many findings (default 16): a refusal needs one, an error message lists a few,
   * and a text made of secrets must not make the scan's output grow with it (STYLE habit 18).
   */
  readonly maxFindings?: number;
  /** The rules to run (default: the vendored gitleaks set and ours, compiled once). */
  readonly ruleSet?: CompiledRuleSet;
}

const DEFAULT_MAX_FINDINGS = 16;

/**
 * Scans a text for credentials: cloud keys, forge and chat tokens, private key blocks, connection
 * strings with passwords (gitleaks' default rules and ours, docs/secrets.md). Pure and synchronous.
 *
 * Linear in the text: one keyword pass (Aho-Corasick), then each woken rule's RE2 regex (re2js:
 * no backtracking) on merged, non-overlapping windows around its keywords, so at most the text's
 * length per rule. Findings are in order of `start`, at most `maxFindings`, and hold no secret.
 */
export function scanForSecrets(text: string, options: ScanOptions = {}): SecretFinding[] {
  const set = options.ruleSet ?? defaultRuleSet();
  const max = options.maxFindings ?? DEFAULT_MAX_FINDINGS;
  if (text.length === 0 || max <= 0) return [];
  const lines = new LineIndex(text);
  const collectors = collectHits(text, set, lines);
  const findings: SecretFinding[] = [];
  const seen = new Set<string>();
  const report = (finding: SecretFinding): void => {
    const key = `${finding.rule}:${finding.start}:${finding.end}`;
    if (seen.has(key) || findings.length >= max) return;
    seen.add(key);
    findings.push(finding);
  };
  for (const [index, collector] of collectors) {
    const rule = set.rules[index]!;
    const { bounds, hits } = collector;
    if (rule.needsOperator && hits.length / 2 <= text.length / ANCHORED_HIT_DENSITY) {
      // A template rule's match starts at its name, which is a keyword: try a match anchored at
      // each hit (a few dozen characters each) instead of searching its whole lines.
      let covered = 0;
      for (let h = 0; h < hits.length && findings.length < max; h += 2) {
        const start = hits[h]!;
        if (start < covered) continue;
        const to = Math.min(
          lines.lineEnd(hits[h + 1]! + rule.reach.linesAfter),
          start + rule.reach.charsAfter,
        );
        covered = Math.max(covered, scanWindow(text, lines, rule, start, to, report, true));
      }
      continue;
    }
    for (let w = 0; w < bounds.length && findings.length < max; w += 2) {
      scanWindow(text, lines, rule, bounds[w]!, bounds[w + 1]!, report, false);
    }
  }
  return findings.sort((a, b) => a.start - b.start || a.end - b.end);
}

/**
 * Where each woken rule runs: for each rule index (in increasing order), flat [start, end) pairs of
 * disjoint windows in increasing order. Their total length is at most the text's length per rule
 * (plus a keyword's length where two windows meet), which is what makes the scan linear: the
 * regexes are RE2 automata, linear in what they read (test/unit/secrets/secret-linear.test.ts).
 */
export function collectWindows(
  text: string,
  set: CompiledRuleSet,
  lines = new LineIndex(text),
): Map<number, readonly number[]> {
  const ordered = new Map<number, readonly number[]>();
  for (const [rule, collector] of collectHits(text, set, lines)) ordered.set(rule, collector.bounds);
  return ordered;
}

/**
 * A template rule is tried anchored at each hit while its hits are at most one per this many
 * characters (each try reads at most `charsAfter`, 256 to 512: at most 32x the text in all); denser,
 * it searches its merged windows like any rule (at most the text once).
 */
const ANCHORED_HIT_DENSITY = 16;

/** Each woken rule's hits and merged windows, by rule index in increasing order. */
function collectHits(text: string, set: CompiledRuleSet, lines: LineIndex): Map<number, WindowCollector> {
  const collectors = new Map<number, WindowCollector>();
  let line = 0;
  set.keywords.forEach(text, (keyword, end) => {
    const start = end - set.keywords.lengths[keyword]!;
    // Hits come in order of `end` and a keyword holds no line break: a cursor finds the line.
    while (lines.lineEnd(line) < end - 1) line++;
    for (const rule of set.rulesByKeyword[keyword]!) {
      if (set.rules[rule]!.needsOperator && !operatorFollows(text, end)) continue;
      let collector = collectors.get(rule);
      if (collector === undefined) {
        collector = new WindowCollector(lines, set.rules[rule]!.reach);
        collectors.set(rule, collector);
      }
      collector.add(start, end, line);
    }
  });
  const ordered = new Map<number, WindowCollector>();
  for (const rule of [...collectors.keys()].sort((a, b) => a - b)) ordered.set(rule, collectors.get(rule)!);
  return ordered;
}

/**
 * Runs one rule on text[from, to) (`anchored`: one match starting at `from`, else every match) and
 * reports each candidate that survives entropy and allowlists. Returns where the last match ended
 * (`from` if none).
 */
function scanWindow(
  text: string,
  lines: LineIndex,
  rule: CompiledRule,
  from: number,
  to: number,
  report: (finding: SecretFinding) => void,
  anchored: boolean,
): number {
  const window = text.substring(from, to);
  const matcher = rule.regex.matcher(window);
  const groups = matcher.groupCount();
  let lastEnd = from;
  while (anchored ? lastEnd === from && matcher.lookingAt() : matcher.find()) {
    lastEnd = from + Math.max(matcher.end(), 1);
    let secretStart = matcher.start();
    let secretEnd = matcher.end();
    if (groups > 0) {
      // gitleaks: the configured group, or the first non-empty one; the whole match if none.
      const chosen = rule.secretGroup > 0 ? rule.secretGroup : firstNonEmptyGroup(matcher, groups);
      if (chosen > 0) {
        if (chosen > groups || matcher.start(chosen) < 0) continue;
        secretStart = matcher.start(chosen);
        secretEnd = matcher.end(chosen);
      }
    }
    if (secretEnd <= secretStart) continue;
    const secret = window.substring(secretStart, secretEnd);
    if (rule.entropy > 0 && shannonEntropy(secret) <= rule.entropy) continue;
    const matchStart = from + matcher.start();
    const matchEnd = from + matcher.end();
    const candidate: AllowlistCandidate = {
      secret,
      match: () => text.substring(widenBack(text, matchStart, rule.prefixRun), matchEnd),
      line: () => {
        const lineFrom = Math.max(lines.lineStart(lines.lineOf(matchStart)), matchStart - LINE_TARGET_REACH);
        const lineTo = Math.min(lines.lineEnd(lines.lineOf(matchEnd)), matchEnd + LINE_TARGET_REACH);
        return text.substring(lineFrom, lineTo);
      },
    };
    if (rule.allowlists.some((allowlist) => allowlist.allows(candidate))) continue;
    const start = from + secretStart;
    report({
      rule: rule.id,
      description: rule.description,
      start,
      end: from + secretEnd,
      line: lines.lineOf(start) + 1,
    });
  }
  return lastEnd;
}

function firstNonEmptyGroup(
  matcher: { start(group: number): number; end(group: number): number },
  groups: number,
): number {
  for (let g = 1; g <= groups; g++) {
    const start = matcher.start(g);
    if (start >= 0 && matcher.end(g) > start) return g;
  }
  return 0;
}
