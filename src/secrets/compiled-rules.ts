import { RE2JS } from "re2js";
import { CompiledAllowlist } from "./compiled-allowlist";
import { KeywordAutomaton } from "./keyword-automaton";
import { reachOf } from "./rule-reach";
import { GITLEAKS_RULE_SET } from "./rules/gitleaks-rules";
import { HOUSE_ALLOWLIST, LOCAL_RULE_SET } from "./rules/local-rules";
import type { VendoredRuleSet } from "./rules/vendored-rule";
import type { WindowReach } from "./scan-windows";
import { templateForm } from "./template-rules";

/** A rule ready to run: its regex compiled by re2js, its allowlists with it. */
export interface CompiledRule {
  readonly id: string;
  readonly description: string;
  readonly regex: RE2JS;
  readonly secretGroup: number;
  readonly entropy: number;
  /** The rule's own allowlists, its set's global one and the house one. */
  readonly allowlists: readonly CompiledAllowlist[];
  readonly reach: WindowReach;
  /** Whether a keyword hit needs an assignment operator after it to wake the rule (template-rules.ts). */
  readonly needsOperator: boolean;
  /** How many `[\w.-]` characters before a match belong to it (the template's dropped prefix). */
  readonly prefixRun: number;
}

/** Every rule the scanner runs, and the keyword automaton that says where to run them. */
export interface CompiledRuleSet {
  readonly rules: readonly CompiledRule[];
  readonly keywords: KeywordAutomaton;
  /** For each keyword (the automaton's index), the rules (indexes into `rules`) it wakes. */
  readonly rulesByKeyword: readonly (readonly number[])[];
  /** Where the rules come from, for docs and logs: `gitleaks v8.30.1 + taskplans 1`. */
  readonly version: string;
}

/** The rule sets the scanner runs, in order: gitleaks' default set, then ours. */
export const RULE_SETS: readonly VendoredRuleSet[] = Object.freeze([GITLEAKS_RULE_SET, LOCAL_RULE_SET]);

/**
 * Compiles the rule sets. Rules with a `path` target file names and are skipped; a rule without
 * keywords is refused (it would run on the whole text of every write).
 */
export function compileRuleSets(sets: readonly VendoredRuleSet[]): CompiledRuleSet {
  const house = new CompiledAllowlist(HOUSE_ALLOWLIST);
  const rules: CompiledRule[] = [];
  const keywordIndex = new Map<string, number>();
  const rulesByKeyword: number[][] = [];
  for (const set of sets) {
    const global = new CompiledAllowlist(set.allowlist);
    for (const rule of set.rules) {
      if (rule.regex === undefined || rule.path !== undefined) continue;
      if (rule.keywords === undefined || rule.keywords.length === 0) {
        throw new Error(`secret rule ${rule.id} has no keywords`);
      }
      const index = rules.length;
      const form = templateForm(rule.regex, rule.keywords);
      rules.push({
        id: rule.id,
        description: rule.description,
        regex: RE2JS.compile(form?.pattern ?? rule.regex),
        secretGroup: rule.secretGroup ?? 0,
        entropy: rule.entropy ?? 0,
        allowlists: [...(rule.allowlists ?? []).map((a) => new CompiledAllowlist(a)), global, house],
        // A template rule's match starts at its name (its leading prefix dropped): little before.
        reach: form === undefined ? reachOf(rule.id) : narrowBefore(reachOf(rule.id)),
        needsOperator: form?.needsOperator ?? false,
        prefixRun: form?.prefixRun ?? 0,
      });
      for (const raw of new Set(rule.keywords.map((k) => k.toLowerCase()))) {
        let k = keywordIndex.get(raw);
        if (k === undefined) {
          k = rulesByKeyword.length;
          keywordIndex.set(raw, k);
          rulesByKeyword.push([]);
        }
        rulesByKeyword[k]!.push(index);
      }
    }
  }
  return {
    rules,
    keywords: new KeywordAutomaton([...keywordIndex.keys()]),
    rulesByKeyword,
    version: sets.map((s) => `${s.source} ${s.version}`).join(" + "),
  };
}

/** Characters before a keyword hit a template rule's window keeps (the rest of its name). */
const TEMPLATE_CHARS_BEFORE = 32;

function narrowBefore(reach: WindowReach): WindowReach {
  return { ...reach, charsBefore: Math.min(reach.charsBefore, TEMPLATE_CHARS_BEFORE) };
}

let compiled: CompiledRuleSet | undefined;

/**
 * The default rule sets, compiled on first use (about a third of a second: call
 * `prepareSecretScanner` at start-up so that no write pays it).
 */
export function defaultRuleSet(): CompiledRuleSet {
  compiled ??= compileRuleSets(RULE_SETS);
  return compiled;
}
