import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { probeRelease, probeReleaseWithin, type ProbeOptions } from "../grpc/health/release-probe";
import { probeHttp } from "../http/http-probe";

const USAGE =
  "usage: healthcheck.js [--retry-for <seconds>] [--health-service <name>] " +
  "[--cacert <file> [--cert <file> --key <file>] [--server-name <name>]] [--http <host:port>] <host:port>\n";

const OPTIONS = {
  "retry-for": { type: "string" },
  "health-service": { type: "string" },
  cacert: { type: "string" },
  cert: { type: "string" },
  key: { type: "string" },
  "server-name": { type: "string" },
  http: { type: "string" },
} as const;

/**
 * `node dist/src/bin/healthcheck.js [options] <host:port>`: the chart's `helm test` hook, and its exec
 * probes when TLS is on (a kubelet's own gRPC probe speaks plaintext only). Checks that the release
 * reports the plan service SERVING and answers a plan read; exits 0 with one line, or 1 with one
 * line naming what failed (2: bad arguments).
 * - `--retry-for <seconds>`: a failed probe is repeated once a second until one passes or the
 *   seconds run out (a policy controller can lag a new pod); the line says how many probes it took.
 * - `--health-service <name>`: only grpc.health.v1 for that service ("" for the whole server).
 * - `--cacert <file>`: TLS, trusting that CA bundle; `--cert`/`--key`: a client certificate (mTLS);
 *   `--server-name`: the name to check the server's certificate against instead of the host.
 * - `--http <host:port>`: the HTTP listener too (PLAN_HTTP_ADDRESS): the same plan read as a Connect
 *   GET, with the same TLS and token, must be answered by the service.
 * PLAN_HEALTHCHECK_TOKEN, when set, is sent as the bearer token.
 */
async function main(argv: string[]): Promise<number> {
  // Its output is one line: not Node's warning when grpc-js sends an IP address as the TLS name.
  process.noDeprecation = true;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch {
    return usage();
  }
  const { values, positionals } = parsed;
  const target = positionals[0];
  const retry = Number(values["retry-for"] ?? 0);
  const pairGiven = (values.cert === undefined) === (values.key === undefined);
  const tlsOnly =
    values.cacert === undefined && (values.cert ?? values.key ?? values["server-name"]) !== undefined;
  if (!target || positionals.length !== 1 || !/^[^\s:]+:\d{1,5}$/.test(target) || !(retry >= 0))
    return usage();
  if (!pairGiven || tlsOnly) return usage();
  const http = values.http;
  if (http !== undefined && !/^[^\s:]+:\d{1,5}$/.test(http)) return usage();
  let tls: ProbeOptions["tls"] = null;
  try {
    if (values.cacert !== undefined) {
      tls = {
        ca: readFileSync(values.cacert),
        clientCert:
          values.cert !== undefined && values.key !== undefined
            ? { cert: readFileSync(values.cert), key: readFileSync(values.key) }
            : null,
        serverName: values["server-name"] ?? null,
      };
    }
  } catch (error) {
    process.stderr.write(`failed: ${(error as Error).message}\n`);
    return 2;
  }
  const options: ProbeOptions = {
    token: process.env.PLAN_HEALTHCHECK_TOKEN || null,
    timeoutMs: 5_000,
    tls,
    healthOnly: values["health-service"] ?? null,
  };
  const probe = async () => {
    const grpc = await probeRelease(target, options);
    if (!grpc.ok || http === undefined || options.healthOnly !== null) return grpc;
    const overHttp = await probeHttp(http, options);
    return overHttp.ok ? { ok: true, summary: `${grpc.summary}; ${overHttp.summary}` } : overHttp;
  };
  const result = retry > 0 ? await probeReleaseWithin(probe, retry * 1_000, 1_000) : await probe();
  const line = result.summary.replace(/\s+/g, " ").trim();
  (result.ok ? process.stdout : process.stderr).write(`${result.ok ? "ok" : "failed"}: ${line}\n`);
  return result.ok ? 0 : 1;
}

function usage(): number {
  process.stderr.write(USAGE);
  return 2;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
