import { parseArgs } from "node:util";
import { probeRelease, probeReleaseWithin } from "./grpc/release-probe";

const USAGE = "usage: healthcheck.js [--retry-for <seconds>] <host:port>\n";

/**
 * `node dist/src/healthcheck.js [--retry-for <seconds>] <host:port>`: the chart's `helm test` hook.
 * Checks that the release's Service reports the plan service SERVING and answers a plan read; exits 0
 * with one line, or 1 with one line naming what failed. With `--retry-for`, a failed probe is repeated
 * once a second until one passes or the seconds run out (a policy controller can lag a new pod), and
 * the line says how many probes it took. PLAN_HEALTHCHECK_TOKEN, when set, is sent as the bearer token.
 */
async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { "retry-for": { type: "string" } }, allowPositionals: true });
  } catch {
    parsed = null;
  }
  const target = parsed?.positionals[0];
  const retry = Number(parsed?.values["retry-for"] ?? 0);
  if (!target || parsed?.positionals.length !== 1 || !/^[^\s:]+:\d{1,5}$/.test(target) || !(retry >= 0)) {
    process.stderr.write(USAGE);
    return 2;
  }
  const token = process.env.PLAN_HEALTHCHECK_TOKEN || null;
  const probe = () => probeRelease(target, token, 5_000);
  const result = retry > 0 ? await probeReleaseWithin(probe, retry * 1_000, 1_000) : await probe();
  (result.ok ? process.stdout : process.stderr).write(`${result.ok ? "ok" : "failed"}: ${result.summary}\n`);
  return result.ok ? 0 : 1;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
