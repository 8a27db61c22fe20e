import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { RE2JS } from "re2js";
import { prepareSecretScanner, scanForSecrets, secretRuleIds } from "../../../src/secrets";
import { CompiledAllowlist } from "../../../src/secrets/compiled-allowlist";
import { RULE_SETS } from "../../../src/secrets/compiled-rules";
import { KeywordAutomaton } from "../../../src/secrets/keyword-automaton";
import { WIDER_REACH_RULES } from "../../../src/secrets/rule-reach";
import { GITLEAKS_RULE_SET } from "../../../src/secrets/rules/gitleaks-rules";
import { HOUSE_ALLOWLIST } from "../../../src/secrets/rules/local-rules";
import { shannonEntropy } from "../../../src/secrets/shannon-entropy";
import { hasTopLevelAlternation, templateForm } from "../../../src/secrets/template-rules";
import { expandTemplate } from "../../fixtures/secrets/expand-template";

const FIXTURES = join(__dirname, "../../fixtures/secrets");

describe("secret rules: the vendored set", () => {
  it("is gitleaks v8.30.1's default configuration, every content rule compiled by re2js", () => {
    expect(GITLEAKS_RULE_SET.version).toBe("v8.30.1");
    expect(GITLEAKS_RULE_SET.rules).toHaveLength(222);
    expect(prepareSecretScanner()).toEqual({ version: "gitleaks v8.30.1 + taskplans 1", rules: 218 });
    const ids = secretRuleIds();
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("every rule whose pattern can cross a line break reaches over lines (rule-reach.ts)", () => {
    const crossing = RULE_SETS.flatMap((set) => set.rules)
      .filter((rule) => rule.regex !== undefined && rule.path === undefined)
      .filter((rule) => /(?<!\\)\\[nr]|\[\\s\\S|\(\?s/.test(rule.regex!))
      .map((rule) => rule.id);
    expect(crossing.filter((id) => !WIDER_REACH_RULES.includes(id))).toEqual([]);
  });

  it("the template form applies to gitleaks' generated rules only, and keeps their patterns valid", () => {
    const templated = GITLEAKS_RULE_SET.rules.filter(
      (rule) => rule.regex !== undefined && templateForm(rule.regex, rule.keywords ?? []) !== undefined,
    );
    expect(templated.length).toBe(90);
    for (const rule of templated) RE2JS.compile(templateForm(rule.regex!, rule.keywords ?? [])!.pattern);
    expect(templateForm("(?i)[\\w.-]{0,50}?(?:x)(?:[ \\t\\w.-]{0,20})", ["x"])).toBeUndefined();
    // A keyword found in the value (after the operator) keeps the rule out of the template form.
    const newRelic = GITLEAKS_RULE_SET.rules.find((r) => r.id === "new-relic-user-api-key")!;
    expect(templateForm(newRelic.regex!, newRelic.keywords!)).toBeUndefined();
    expect(hasTopLevelAlternation("a(b|c)[|]\\|d")).toBe(false);
    expect(hasTopLevelAlternation("(a)|b")).toBe(true);
  });
});

describe("secret rules: the keyword automaton", () => {
  it("finds exactly the occurrences a naive search finds, ASCII case-insensitively", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-c_]{1,4}$/), { minLength: 1, maxLength: 6 }),
        fc.stringMatching(/^[a-cA-C_é\n]{0,60}$/),
        (keywords, text) => {
          const found: string[] = [];
          new KeywordAutomaton(keywords).forEach(text, (k, end) => found.push(`${k}@${end}`));
          const expected: string[] = [];
          const lower = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
          for (let end = 1; end <= text.length; end++) {
            keywords.forEach((k, i) => {
              if (end >= k.length && lower.slice(end - k.length, end) === k) expected.push(`${i}@${end}`);
            });
          }
          expect(found.sort()).toEqual(expected.sort());
        },
      ),
    );
  });

  it("refuses an empty or non-ASCII keyword", () => {
    expect(() => new KeywordAutomaton([""])).toThrow();
    expect(() => new KeywordAutomaton(["clé"])).toThrow();
  });
});

/**
 * The pure twin: gitleaks' own procedure (every rule whose keyword occurs anywhere runs its original
 * pattern on the whole text), against which the windows, the template form and the operator gate
 * must give the same findings on the corpus.
 */
function referenceScan(text: string): string[] {
  const house = new CompiledAllowlist(HOUSE_ALLOWLIST);
  const out: string[] = [];
  const lower = text.toLowerCase();
  for (const set of RULE_SETS) {
    const global = new CompiledAllowlist(set.allowlist);
    for (const rule of set.rules) {
      if (rule.regex === undefined || rule.path !== undefined) continue;
      if (!(rule.keywords ?? []).some((k) => lower.includes(k.toLowerCase()))) continue;
      const allowlists = [...(rule.allowlists ?? []).map((a) => new CompiledAllowlist(a)), global, house];
      const m = RE2JS.compile(rule.regex).matcher(text);
      const groups = m.groupCount();
      while (m.find()) {
        let [start, end] = [m.start(), m.end()];
        const group =
          rule.secretGroup ??
          Array.from({ length: groups }, (_, g) => g + 1).find(
            (g) => m.start(g) >= 0 && m.end(g) > m.start(g),
          );
        if (group !== undefined && groups > 0) [start, end] = [m.start(group), m.end(group)];
        const secret = text.slice(start, end);
        if ((rule.entropy ?? 0) > 0 && shannonEntropy(secret) <= rule.entropy!) continue;
        const match = text.slice(m.start(), m.end());
        const lineStart = text.lastIndexOf("\n", m.start() - 1) + 1;
        const lineEnd = text.indexOf("\n", m.end());
        const line = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd);
        if (allowlists.some((a) => a.allows({ secret, match: () => match, line: () => line }))) continue;
        out.push(`${rule.id}@${start}-${end}`);
      }
    }
  }
  return [...new Set(out)].sort();
}

describe("secret rules: the scan finds what gitleaks' whole-text procedure finds", () => {
  const positives = (
    JSON.parse(readFileSync(join(FIXTURES, "positives.json"), "utf8")) as {
      cases: { rule: string; text: string }[];
    }
  ).cases.map((c, i) => expandTemplate(c.text, i + 1));
  const negatives = ["release-plan.md", "fixtures-plan.md", "ops-plan.md", "code-plan.md"].map((n) =>
    readFileSync(join(FIXTURES, "negatives", n), "utf8"),
  );

  it.each(
    [...positives, ...negatives, positives.join("\n\n"), negatives.join("\n") + positives.join("\n")].map(
      (text, i) => [i, text] as const,
    ),
  )("corpus text %i", (_i, text) => {
    const ours = scanForSecrets(text, { maxFindings: 1000 }).map((f) => `${f.rule}@${f.start}-${f.end}`);
    expect(ours.sort()).toEqual(referenceScan(text));
  });
});

describe("docs/secrets.md", () => {
  it("lists every rule the scanner runs, in its table of rules", () => {
    const doc = readFileSync(join(__dirname, "../../../docs/secrets.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Rules"));
    const listed = [...section.matchAll(/^\| `([a-z0-9-]+)` +\|/gm)].map((m) => m[1]);
    expect(listed).toEqual(secretRuleIds());
  });
});
