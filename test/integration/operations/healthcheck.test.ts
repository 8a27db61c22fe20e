import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToExit } from "../../harness/servers/processes";
import { makeCa, type TestCa } from "../../harness/identity/pki";
import { type Replica, startReplica } from "../../harness/servers/replica";

// The chart's `helm test` entry point exactly as shipped (dist/src/bin/healthcheck.js, built by
// `npm run build`), against a replica on the embedded SQLite default.
const HEALTHCHECK = join(__dirname, "..", "..", "..", "dist", "src", "bin", "healthcheck.js");
const healthcheck = (...args: string[]) =>
  runToExit([process.execPath, HEALTHCHECK, ...args], { timeoutMs: 60_000 });

let dir: string;
let replica: Replica;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "healthcheck-"));
  replica = await startReplica({ PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}` }, dir);
}, 60_000);

afterAll(async () => {
  await replica?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("healthcheck.js, the helm test entry point", () => {
  it("passes at once against a serving replica, with or without --retry-for", async () => {
    for (const args of [[], ["--retry-for", "30"]]) {
      const run = await healthcheck(...args, `127.0.0.1:${replica.port}`);
      expect([run.code, run.stderr]).toEqual([0, ""]);
      expect(run.stdout).toBe(
        `ok: 127.0.0.1:${replica.port}: taskplans.v1.PlanService SERVING; a plan read answered NOT_FOUND TASK_NOT_FOUND\n`,
      );
    }
  });

  it("with --http, also reads a plan through the HTTP listener (a Connect GET) and fails when it does not answer", async () => {
    const http = `127.0.0.1:${replica.httpPort}`;
    const run = await healthcheck("--http", http, `127.0.0.1:${replica.port}`);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toBe(
      `ok: 127.0.0.1:${replica.port}: taskplans.v1.PlanService SERVING; a plan read answered NOT_FOUND TASK_NOT_FOUND; ` +
        `${http}: a plan read over HTTP (Connect GET) answered not_found TASK_NOT_FOUND\n`,
    );
    // The gRPC port answering is not enough: an HTTP port that does not answer fails the check.
    const closed = await healthcheck("--http", "127.0.0.1:1", `127.0.0.1:${replica.port}`);
    expect([closed.code, closed.stdout]).toEqual([1, ""]);
    expect(closed.stderr).toMatch(/^failed: 127\.0\.0\.1:1 \(HTTP\): .*\n$/);
  });

  it("fails at once with one line when nothing serves and no --retry-for is given", async () => {
    await replica.kill();
    try {
      const run = await healthcheck(`127.0.0.1:${replica.port}`);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(new RegExp(`^failed: 127\\.0\\.0\\.1:${replica.port}: .*\\n$`));
      expect(run.elapsedMs).toBeLessThan(20_000); // it did not wait: one probe with its 5 s deadline
    } finally {
      await replica.restart();
    }
  }, 60_000);

  it("with --retry-for, repeats a failed probe until the replica serves, and says how many probes it took", async () => {
    await replica.kill();
    const run = healthcheck("--retry-for", "40", `127.0.0.1:${replica.port}`);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await replica.restart();
    const result = await run;
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const probes = Number(/\(probe (\d+)\)\n$/.exec(result.stdout)?.[1]);
    expect(probes).toBeGreaterThan(1);
    expect(result.stdout).toMatch(
      /^ok: .* SERVING; a plan read answered NOT_FOUND TASK_NOT_FOUND \(probe \d+\)\n$/,
    );
  }, 90_000);

  it("with --retry-for, gives up once the seconds run out and prints the last failure", async () => {
    await replica.kill();
    try {
      const run = await healthcheck("--retry-for", "3", `127.0.0.1:${replica.port}`);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^failed: .* \(probe \d+\)\n$/);
    } finally {
      await replica.restart();
    }
  }, 60_000);

  it.each([
    [[]],
    [["--retry-for"]],
    [["--retry-for", "soon", "127.0.0.1:1"]],
    [["a:1", "b:2"]],
    [["--wait", "a:1"]],
    [["--http", "nowhere", "a:1"]],
  ])("refuses bad arguments %j with its usage line and exit code 2", async (args) => {
    const run = await healthcheck(...args);
    expect([run.code, run.stdout, run.stderr]).toEqual([
      2,
      "",
      "usage: healthcheck.js [--retry-for <seconds>] [--health-service <name>] " +
        "[--cacert <file> [--cert <file> --key <file>] [--server-name <name>]] [--http <host:port>] <host:port>\n",
    ]);
  });
});

describe("healthcheck.js over TLS and mTLS (the chart's probes and helm test when tls is on)", () => {
  let ca: TestCa;
  let mutual: Replica;
  let client: { certFile: string; keyFile: string };

  beforeAll(async () => {
    ca = makeCa(dir, "ca");
    // Named only by a DNS name, as a Service certificate is: dialing 127.0.0.1 needs --server-name.
    const server = ca.issue("server", { names: ["taskplans.example"] });
    client = ca.issue("probe");
    mutual = await startReplica(
      {
        PLAN_DATABASE_URL: `sqlite:${join(dir, "mutual.sqlite")}`,
        PLAN_GRPC_TLS_CERT_FILE: server.certFile,
        PLAN_GRPC_TLS_KEY_FILE: server.keyFile,
        PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
      },
      dir,
      null,
      { tls: { ca: ca.pem(), serverName: "taskplans.example", client } },
    );
  }, 60_000);
  afterAll(() => mutual?.stop());

  const target = () => `127.0.0.1:${mutual.port}`;
  const tlsArgs = () => ["--cacert", ca.certFile, "--cert", client.certFile, "--key", client.keyFile];

  it("passes with the CA, a client certificate and the certificate's name; the health-only form names what it asked", async () => {
    const full = await healthcheck(...tlsArgs(), "--server-name", "taskplans.example", target());
    expect([full.code, full.stderr]).toEqual([0, ""]);
    expect(full.stdout).toMatch(/SERVING; a plan read answered NOT_FOUND TASK_NOT_FOUND\n$/);
    // The HTTP listener over HTTPS with the same CA, client certificate and name (helm test with tls on).
    const http = `127.0.0.1:${mutual.httpPort}`;
    const args = [...tlsArgs(), "--server-name", "taskplans.example", "--http", http, target()];
    const both = await healthcheck(...args);
    expect([both.code, both.stderr]).toEqual([0, ""]);
    expect(both.stdout).toMatch(
      /; 127\.0\.0\.1:\d+: a plan read over HTTP \(Connect GET\) answered not_found TASK_NOT_FOUND\n$/,
    );
    const withoutCert = await healthcheck(
      "--cacert",
      ca.certFile,
      "--server-name",
      "taskplans.example",
      "--http",
      http,
      target(),
    );
    expect(withoutCert.code).toBe(1);
    const server = await healthcheck(
      ...tlsArgs(),
      "--server-name",
      "taskplans.example",
      "--health-service",
      "",
      target(),
    );
    expect([server.code, server.stdout]).toEqual([0, `ok: ${target()}: the server SERVING\n`]);
    const plans = await healthcheck(
      ...tlsArgs(),
      "--server-name",
      "taskplans.example",
      "--health-service",
      "taskplans.v1.PlanService",
      target(),
    );
    expect([plans.code, plans.stdout]).toEqual([0, `ok: ${target()}: taskplans.v1.PlanService SERVING\n`]);
  });

  it.each([
    ["plaintext", () => [target()]],
    [
      "no client certificate",
      () => ["--cacert", ca.certFile, "--server-name", "taskplans.example", target()],
    ],
    ["the wrong server name", () => [...tlsArgs(), "--server-name", "other.example", target()]],
    ["no server name (the certificate does not name 127.0.0.1)", () => [...tlsArgs(), target()]],
  ])("fails with one line: %s", async (_case, args) => {
    const run = await healthcheck(...args());
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^failed: 127\.0\.0\.1:\d+: .*\n$/);
  });

  it("names a file it cannot read, with exit code 2", async () => {
    const run = await healthcheck("--cacert", join(dir, "missing.crt"), target());
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^failed: ENOENT: no such file or directory, open '.*missing\.crt'\n$/);
  });
});
