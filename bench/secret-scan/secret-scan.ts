/**
 * Benchmark (not a test): what the secret scan (src/secrets, issue 61 item 3) costs, in medians of
 * `BENCH_ROUNDS` runs of this process's CPU time (the scan is synchronous, on the calling thread), and how often it flags text that holds no secret:
 *
 * - a typical 256 KiB plan (the realistic plans of test/fixtures/secrets/negatives, repeated) and a
 *   typical 2 KiB append and a 256-byte one cut from it;
 * - adversarial 256 KiB texts made to wake rules everywhere (the worst the linear bound allows);
 * - the false-positive figure: findings per MiB on the negatives corpus and on this repository's
 *   own docs (text written by people about credentials, tokens and keys, holding none).
 *
 *   npm run bench:secret-scan
 *   BENCH_ROUNDS=31 npm run bench:secret-scan
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { prepareSecretScanner, scanForSecrets } from "../../src/secrets";

const ROOT = join(__dirname, "../../..");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? "15");
const KIB = 1024;

function fill(unit: string, size: number): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

function markdownUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...markdownUnder(path));
    else if (name.endsWith(".md")) out.push(path);
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median CPU ms (user + system, this process) of one scan of `text`, after two warm-up scans. */
function timeScan(text: string): { ms: number; findings: number } {
  let findings = 0;
  for (let i = 0; i < 2; i++) findings = scanForSecrets(text).length;
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = process.cpuUsage();
    scanForSecrets(text);
    const used = process.cpuUsage(start);
    times.push((used.user + used.system) / 1000);
  }
  return { ms: median(times), findings };
}

function main(): void {
  const compileStart = process.hrtime.bigint();
  const prepared = prepareSecretScanner();
  const compileMs = Number(process.hrtime.bigint() - compileStart) / 1e6;
  const negativesDir = "test/fixtures/secrets/negatives";
  const negatives = readdirSync(join(ROOT, negativesDir))
    .filter((n) => n.endsWith(".md"))
    .map((n) => readFileSync(join(ROOT, negativesDir, n), "utf8"));
  const plan = fill(negatives.join("\n"), 256 * KIB);
  const append = plan.slice(10 * KIB, 12 * KIB);
  const smallAppend = plan.slice(20 * KIB, 20 * KIB + 256);

  const cases: [string, string][] = [
    ["typical plan, 256 KiB", plan],
    ["typical append, 2 KiB", append],
    ["small append, 256 B", smallAppend],
    ["adversarial: one character, 256 KiB", fill("a", 256 * KIB)],
    ["adversarial: `key=` on one line, 256 KiB", fill("key=", 256 * KIB)],
    ["adversarial: `password: ` lines, 256 KiB", fill("password: \n", 256 * KIB)],
    ["adversarial: PEM headers never closed, 256 KiB", fill("-----BEGIN RSA PRIVATE KEY-----", 256 * KIB)],
    ["adversarial: `a://b:` repeated, 256 KiB", fill("a://b:", 256 * KIB)],
    ["adversarial: `eyJ` repeated, 256 KiB", fill("eyJ", 256 * KIB)],
  ];
  process.stdout.write(
    `secret scan: ${prepared.version}, ${prepared.rules} rules, compiled in ${compileMs.toFixed(0)} ms; ` +
      `medians of ${ROUNDS} runs (node ${process.version})\n\n`,
  );
  process.stdout.write("| text | median CPU ms | MiB/s | findings |\n| --- | ---: | ---: | ---: |\n");
  for (const [label, text] of cases) {
    const { ms, findings } = timeScan(text);
    const mibs = text.length / (1024 * 1024) / (ms / 1000);
    process.stdout.write(`| ${label} | ${ms.toFixed(2)} | ${mibs.toFixed(1)} | ${findings} |\n`);
  }

  const corpora: [string, string[]][] = [
    ["negatives corpus", negatives],
    [
      "this repository's docs (README, docs/, bench/, mcp/, cli/ markdown)",
      [
        "README.md",
        ...markdownUnder("docs"),
        ...markdownUnder("bench"),
        "mcp/README.md",
        "cli/README.md",
      ].map((p) => readFileSync(join(ROOT, p), "utf8")),
    ],
  ];
  process.stdout.write(
    "\n| corpus | files | KiB | findings | per MiB |\n| --- | ---: | ---: | ---: | ---: |\n",
  );
  for (const [label, texts] of corpora) {
    const bytes = texts.reduce((sum, t) => sum + t.length, 0);
    const findings = texts.reduce((sum, t) => sum + scanForSecrets(t, { maxFindings: 1000 }).length, 0);
    process.stdout.write(
      `| ${label} | ${texts.length} | ${(bytes / KIB).toFixed(0)} | ${findings} | ` +
        `${(findings / (bytes / (1024 * 1024))).toFixed(2)} |\n`,
    );
  }
}

main();
