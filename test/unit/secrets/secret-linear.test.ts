import { defaultRuleSet, RULE_SETS } from "../../../src/secrets/compiled-rules";
import { collectWindows, scanForSecrets } from "../../../src/secrets/scan-for-secrets";

/**
 * The scan is linear in the text by construction: one Aho-Corasick pass, then RE2 automata (re2js,
 * no backtracking) over disjoint windows. These tests time nothing (the machine is shared): they
 * check the construction (each rule reads at most the text once) and that adversarial texts, built
 * to make a backtracking engine or a per-hit window explode, complete.
 */
const KIB = 1024;
const set = defaultRuleSet();

function fill(unit: string, size: number): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

/**
 * Each rule's windows: increasing, disjoint, inside the text (`ordered`); the largest and the total
 * volume read by the rules' regexes.
 */
function windowVolume(text: string): { max: number; total: number; ordered: boolean } {
  let max = 0;
  let total = 0;
  let ordered = true;
  for (const bounds of collectWindows(text, set).values()) {
    let volume = 0;
    let previousEnd = 0;
    for (let i = 0; i < bounds.length; i += 2) {
      const start = bounds[i]!;
      const end = bounds[i + 1]!;
      if (start < previousEnd || end < start || end > text.length) ordered = false;
      previousEnd = end;
      volume += end - start;
    }
    max = Math.max(max, volume);
    total += volume;
  }
  return { max, total, ordered };
}

const ADVERSARIAL_256K: readonly (readonly [string, string])[] = [
  ["one character", fill("a", 256 * KIB)],
  ["one line of `key=`", fill("key=", 256 * KIB)],
  ["`password: ` lines", fill("password: \n", 256 * KIB)],
  ["a PEM header repeated, never closed", fill("-----BEGIN RSA PRIVATE KEY-----", 256 * KIB)],
  ["`curl ` repeated on one line", fill("curl ", 256 * KIB)],
  ["`://` repeated", fill("a://b:", 256 * KIB)],
  ["AKIA repeated", fill("AKIA", 256 * KIB)],
  ["`ey` repeated (the JWT keyword)", fill("eyJ", 256 * KIB)],
  ["a base64 blob with no break", fill("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIz", 256 * KIB)],
];

describe("secret scan: linear by construction", () => {
  it.each(ADVERSARIAL_256K)("%s (256 KiB): each rule reads at most the text once", (_name, text) => {
    const { max, ordered } = windowVolume(text);
    expect(ordered).toBe(true);
    expect(max).toBeLessThanOrEqual(text.length);
    expect(scanForSecrets(text).length).toBeLessThanOrEqual(16);
  });

  it("each keyword of the rule set, repeated to 8 KiB with separators rules want next, completes the same way", () => {
    let texts = 0;
    const failures: string[] = [];
    for (const keyword of keywordStrings()) {
      for (const separator of ["", "=", " = 'a1B2c3D4e5F6g7H8", "_", "\n"]) {
        const text = fill(keyword + separator, 8 * KIB);
        const { max, ordered } = windowVolume(text);
        if (!ordered || max > text.length || scanForSecrets(text).length > 16) {
          failures.push(JSON.stringify(keyword + separator));
        }
        texts++;
      }
    }
    expect(failures).toEqual([]);
    expect(texts).toBeGreaterThan(1000);
  });

  it("a template rule tried at each hit reads at most 512 characters per try (32x the text at most)", () => {
    const templated = set.rules.filter((rule) => rule.needsOperator);
    expect(templated.length).toBeGreaterThan(80);
    for (const rule of templated) expect(rule.reach.charsAfter).toBeLessThanOrEqual(512);
  });

  it("the total work grows with the text, not faster: 4x the text, at most 4x the windows", () => {
    const unit = "- [ ] rotate the api key: key=value token: abc secret = x password:\n";
    const small = windowVolume(fill(unit, 64 * KIB)).total;
    const large = windowVolume(fill(unit, 256 * KIB)).total;
    expect(large).toBeLessThanOrEqual(4 * small + 4 * KIB);
  });
});

/** The keyword strings of the default rule sets (lower case). */
function keywordStrings(): string[] {
  const out = new Set<string>();
  for (const ruleSet of RULE_SETS) {
    for (const rule of ruleSet.rules) for (const k of rule.keywords ?? []) out.add(k.toLowerCase());
  }
  return [...out];
}
