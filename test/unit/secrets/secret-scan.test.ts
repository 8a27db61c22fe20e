import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describeFinding, scanForSecrets } from "../../../src/secrets";
import { expandTemplate } from "../../fixtures/secrets/expand-template";

const FIXTURES = join(__dirname, "../../fixtures/secrets");

interface PositiveCase {
  readonly rule: string;
  readonly text: string;
}

const positives = (
  JSON.parse(readFileSync(join(FIXTURES, "positives.json"), "utf8")) as { cases: PositiveCase[] }
).cases.map((c, i) => ({ rule: c.rule, template: c.text, text: expandTemplate(c.text, i + 1) }));

const negatives = readdirSync(join(FIXTURES, "negatives"))
  .filter((name) => name.endsWith(".md"))
  .map((name) => ({ name, text: readFileSync(join(FIXTURES, "negatives", name), "utf8") }));

describe("scanForSecrets: synthetic credentials of each rule family are found", () => {
  it.each(positives.map((p, i) => [i + 1, p.rule, p] as const))("case %i (%s)", (_i, rule, positive) => {
    const findings = scanForSecrets(positive.text);
    expect(findings.map((f) => f.rule)).toContain(rule);
    for (const finding of findings) {
      expect(finding.start).toBeGreaterThanOrEqual(0);
      expect(finding.end).toBeGreaterThan(finding.start);
      expect(finding.end).toBeLessThanOrEqual(positive.text.length);
      // The range lies on generated characters, not on the plan text around them.
      const secret = positive.text.slice(finding.start, finding.end);
      expect(positive.template).not.toContain(secret);
    }
  });
});

describe("scanForSecrets: realistic plan text gives no finding", () => {
  it.each(negatives.map((n) => [n.name, n.text] as const))("%s", (_name, text) => {
    expect(scanForSecrets(text)).toEqual([]);
  });

  it("the AWS documentation's example keys and jwt.io's sample token are not findings", () => {
    const text = [
      "AKIAIOSFODNN7EXAMPLE",
      "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ].join("\n");
    expect(scanForSecrets(text)).toEqual([]);
  });
});

describe("scanForSecrets: a finding says where, never what", () => {
  const key = expandTemplate("ghp_{an:36}", 7);

  it("offsets are UTF-16 code units of the scanned string, end exclusive, with a 1-based line", () => {
    const text = `# Plan 😀 ünïcode\n\nline two 🚀🚀 token ${key} end`;
    const [finding, ...rest] = scanForSecrets(text);
    expect(rest).toEqual([]);
    expect(finding).toEqual({
      rule: "github-pat",
      description: expect.any(String) as string,
      start: text.indexOf(key),
      end: text.indexOf(key) + key.length,
      line: 3,
    });
  });

  it("neither the finding nor its description holds the secret or a part of it", () => {
    const text = `push with ${key}`;
    const findings = scanForSecrets(text);
    expect(findings).toHaveLength(1);
    const rendered = JSON.stringify(findings) + describeFinding(findings[0]!, "the appended text");
    expect(rendered).not.toContain(key);
    expect(rendered).not.toContain(key.slice(4, 14));
    expect(describeFinding(findings[0]!, "the appended text")).toBe(
      "possible secret (rule github-pat) in the appended text at line 1, characters 10-50 (40 long)",
    );
  });

  it("the secret group is the range: a key's name and quotes are not part of it", () => {
    const value = expandTemplate("{lan:32}", 3);
    const text = `api_key: "${value}"`;
    const findings = scanForSecrets(text);
    expect(findings.map((f) => [f.rule, text.slice(f.start, f.end)])).toEqual([["generic-api-key", value]]);
  });

  it("stops at maxFindings (default 16), in order of start", () => {
    const text = Array.from({ length: 40 }, (_, i) => expandTemplate("ghp_{an:36}", 100 + i)).join("\n");
    const findings = scanForSecrets(text);
    expect(findings).toHaveLength(16);
    expect(findings.map((f) => f.start)).toEqual([...findings.map((f) => f.start)].sort((a, b) => a - b));
    expect(scanForSecrets(text, { maxFindings: 1 })).toHaveLength(1);
    expect(scanForSecrets("")).toEqual([]);
  });

  it("finds a secret anywhere in a long text, once", () => {
    const filler = "- [ ] a step of the plan with a task id 1b4e28ba-2fa1-11d2-883f-0016d3cca427\n";
    const text = filler.repeat(2000) + `deploy key ${key}\n` + filler.repeat(2000);
    const findings = scanForSecrets(text);
    expect(findings.map((f) => [f.rule, f.start])).toEqual([["github-pat", text.indexOf(key)]]);
  });
});
