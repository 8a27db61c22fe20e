import { probeRelease } from "./grpc/release-probe";

/**
 * `node dist/src/healthcheck.js <host:port>`: the chart's `helm test` hook. Checks that the release's
 * Service reports the plan service SERVING and answers a plan read; exits 0 with one line, or 1 with
 * one line naming what failed. PLAN_HEALTHCHECK_TOKEN, when set, is sent as the bearer token.
 */
async function main(): Promise<number> {
  const target = process.argv[2];
  if (!target || !/^[^\s:]+:\d{1,5}$/.test(target)) {
    process.stderr.write("usage: healthcheck.js <host:port>\n");
    return 2;
  }
  const result = await probeRelease(target, process.env.PLAN_HEALTHCHECK_TOKEN || null, 5_000);
  (result.ok ? process.stdout : process.stderr).write(`${result.ok ? "ok" : "failed"}: ${result.summary}\n`);
  return result.ok ? 0 : 1;
}

void main().then((code) => process.exit(code));
