import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { cachedTool, ROOT } from "../../harness/kube/helm";
import { runToExit } from "../../harness/servers/processes";

// Connect's conformance suite (connectconformance, pinned in scripts/toolchain.sh and installed by
// npm test) in server mode: its reference clients (connect-go, and its gRPC-Web client) send every
// test case its config allows to connectrpc.conformance.v1.ConformanceService mounted on the HTTP
// door's own request handling (src/http/connect-handler.ts: the direct paths, ADR 0013, and
// Connect's router), with the door's protocols and settings. The features are the door's
// (test/conformance/config.yaml); test/conformance/known-failing.txt lists the cases expected to
// fail, each with its reason: a case listed that passes fails the run too. docs/testing.md.

const CONFORMANCE_VERSION = "v1.0.7"; // as scripts/toolchain.sh pins it
const OUT = join(ROOT, "dist-conformance");
const CONFIG = join(ROOT, "test", "conformance");

/** The conformance protos, from the Go module the runner was built from (in the module cache). */
function conformanceProtos(): string {
  const listed = execFileSync(
    "go",
    ["mod", "download", "-json", `connectrpc.com/conformance@${CONFORMANCE_VERSION}`],
    {
      encoding: "utf8",
    },
  );
  return join((JSON.parse(listed) as { Dir: string }).Dir, "proto");
}

describe("Connect conformance (connectconformance --mode server) against the HTTP door's request handling", () => {
  it("passes every case of the door's features, but the known failing ones, each with its reason", async () => {
    mkdirSync(OUT, { recursive: true });
    const descriptors = join(OUT, "conformance.binpb");
    execFileSync(join(ROOT, "node_modules", ".bin", "buf"), [
      "build",
      conformanceProtos(),
      "-o",
      descriptors,
    ]);
    buildSync({
      entryPoints: [join(CONFIG, "server.ts")],
      bundle: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      packages: "external",
      outfile: join(OUT, "server.js"),
      logLevel: "warning",
    });
    const first = await runToExit(
      [
        cachedTool("connectconformance"),
        "--mode",
        "server",
        "--conf",
        join(CONFIG, "config.yaml"),
        "--known-failing",
        `@${join(CONFIG, "known-failing.txt")}`,
        "--parallel",
        "4",
        "--",
        process.execPath,
        join(OUT, "server.js"),
      ],
      { timeoutMs: 600_000, env: { ...process.env, CONFORMANCE_DESCRIPTORS: descriptors } },
    );
    const output = first.stdout + first.stderr;
    const total = Number(/^Total cases: (\d+)$/m.exec(output)?.[1] ?? 0);
    const [passed, failed] = countsOf(output);
    // The counts, for the record (docs/testing.md).
    process.stdout.write(`connectconformance: ${total} cases, ${passed} passed, ${failed} failed\n`);
    expect(total).toBeGreaterThan(1_500);
    // Every case passes (no case is listed as known failing): a failed one, or a listed one that
    // passed ("INCORRECTLY PASSED"), is named here with the runner's reasons.
    expect(casesOf(output).map((f) => `${f.name}\n${f.why}`)).toEqual([]);
    expect(failed).toBe(0);
    expect(passed).toBe(total);
  });
});

// The runner's "N passed, M failed" line.
function countsOf(output: string): number[] {
  const line = /^(\d+) passed, (\d+) failed$/m.exec(output);
  return [Number(line?.[1] ?? 0), Number(line?.[2] ?? 0)];
}

/** Each failed case of the runner's report: its name line and the lines that say why. */
function casesOf(output: string): { name: string; why: string }[] {
  const cases: { name: string; why: string }[] = [];
  for (const line of output.split("\n")) {
    if (/^(FAILED|INCORRECTLY PASSED)/.test(line)) cases.push({ name: line, why: "" });
    else if (line.startsWith("\t") && cases.length > 0)
      (cases[cases.length - 1] as { why: string }).why += `${line}\n`;
  }
  return cases;
}
