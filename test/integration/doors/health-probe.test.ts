import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { type RunningApp, startApp } from "../../../src/app";
import { loadConfig } from "../../../src/config/config";
import { createDatabase, startMariaDb } from "../../harness/databases/mariadb";
import { type CertFiles, makeCa, type TestCa } from "../../harness/identity/pki";
import { cachedTool } from "../../harness/kube/helm";
import { runToExit, waitFor } from "../../harness/servers/processes";

// grpc-health-probe (the probe Kubernetes users put in front of gRPC services; npm test installs
// the pinned version into the tool cache) against the plain, TLS and mTLS ports, in each answer the
// health service gives: SERVING, NOT_SERVING, and NotFound for a name it does not know. No code of
// the project's is on the client side. docs/testing.md "Reference clients".
//
// Each replica verifies tokens with a JWK Set it cannot fetch (nothing listens there): the whole
// server ("", what startup and liveness probes ask) is SERVING, the plan and task services, which
// need a verified caller, are NOT_SERVING (src/grpc/health/serving-conditions.ts, docs/production.md).

// The probe's exit codes (its README): 0 serving, 2 connection failed, 3 the RPC failed, 4 unhealthy.
const SERVING = 0;
const CONNECTION_FAILED = 2;
const RPC_FAILED = 3;
const UNHEALTHY = 4;

let dir: string;
let ca: TestCa;
let client: CertFiles;
let stranger: TestCa; // another CA: a server or client it signed is not trusted
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "taskplans-health-probe-"));
  ca = makeCa(dir, "ca");
  client = ca.issue("probe");
  stranger = makeCa(dir, "stranger-ca");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const UNFETCHABLE_KEYS = {
  PLAN_AUTH_JWKS_URL: "https://127.0.0.1:1/jwks.json",
  PLAN_AUTH_ISSUER: "https://idp.invalid",
  PLAN_AUTH_AUDIENCE: "taskplans",
  PLAN_AUTH_WORKSPACES_CLAIM: "https://taskplans.example/workspaces",
  PLAN_AUTH_KIND_CLAIM: "https://taskplans.example/kind",
  PLAN_AUTH_NAME_CLAIM: "preferred_username",
};

async function replica(name: string, env: Record<string, string>): Promise<RunningApp> {
  return startApp(
    loadConfig({
      PLAN_GRPC_ADDRESS: "127.0.0.1:0",
      PLAN_HTTP_ADDRESS: "",
      PLAN_METRICS_ADDRESS: "",
      PLAN_DATABASE_URL: `sqlite:${join(dir, `${name}.sqlite`)}`,
      PLAN_LOG_LEVEL: "silent",
      ...env,
    }),
    { logger: pino({ level: "silent" }) },
  );
}

const probe = (port: number, args: readonly string[]) =>
  runToExit(
    [
      cachedTool("grpc-health-probe"),
      `-addr=127.0.0.1:${port}`,
      "-connect-timeout=5s",
      "-rpc-timeout=5s",
      ...args,
    ],
    {
      timeoutMs: 30_000,
    },
  );

/** What the probe answers for each service name: its exit code and its one line. */
async function answers(port: number, args: readonly string[]) {
  const results = [];
  for (const service of ["", "taskplans.v1.PlanService", "taskplans.v1.TaskService", "no.such.Service"]) {
    const { code, stdout, stderr } = await probe(port, [...args, `-service=${service}`]);
    results.push([service, code, (stdout + stderr).trim()]);
  }
  return results;
}

const EXPECTED = [
  ["", SERVING, "status: SERVING"],
  ["taskplans.v1.PlanService", UNHEALTHY, 'service unhealthy (responded with "NOT_SERVING")'],
  ["taskplans.v1.TaskService", UNHEALTHY, 'service unhealthy (responded with "NOT_SERVING")'],
  [
    "no.such.Service",
    RPC_FAILED,
    "error: health rpc failed: rpc error: code = NotFound desc = Health status unknown for service no.such.Service",
  ],
];

describe("grpc-health-probe", () => {
  it("plain port: SERVING for the server, NOT_SERVING for the services that wait for the keys, NotFound for an unknown name", async () => {
    const app = await replica("plain", UNFETCHABLE_KEYS);
    try {
      expect(await answers(app.port, [])).toEqual(EXPECTED);
      // TLS to a plaintext port never connects.
      expect((await probe(app.port, ["-tls", `-tls-ca-cert=${ca.certFile}`])).code).toBe(CONNECTION_FAILED);
    } finally {
      await app.stop();
    }
  });

  it("TLS port (PLAN_GRPC_TLS_CERT_FILE): the same answers with the CA; not connected without TLS or with another CA", async () => {
    const served = ca.issue("server-tls");
    const app = await replica("tls", {
      ...UNFETCHABLE_KEYS,
      PLAN_GRPC_TLS_CERT_FILE: served.certFile,
      PLAN_GRPC_TLS_KEY_FILE: served.keyFile,
    });
    try {
      expect(await answers(app.port, ["-tls", `-tls-ca-cert=${ca.certFile}`])).toEqual(EXPECTED);
      expect((await probe(app.port, [])).code).toBe(CONNECTION_FAILED);
      expect((await probe(app.port, ["-tls", `-tls-ca-cert=${stranger.certFile}`])).code).toBe(
        CONNECTION_FAILED,
      );
    } finally {
      await app.stop();
    }
  });

  it("mTLS port (PLAN_GRPC_TLS_CLIENT_CA_FILE): the same answers with a client certificate; refused without one or with a stranger's", async () => {
    const served = ca.issue("server-mtls");
    const app = await replica("mtls", {
      ...UNFETCHABLE_KEYS,
      PLAN_GRPC_TLS_CERT_FILE: served.certFile,
      PLAN_GRPC_TLS_KEY_FILE: served.keyFile,
      PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
    });
    const tls = ["-tls", `-tls-ca-cert=${ca.certFile}`];
    try {
      expect(
        await answers(app.port, [
          ...tls,
          `-tls-client-cert=${client.certFile}`,
          `-tls-client-key=${client.keyFile}`,
        ]),
      ).toEqual(EXPECTED);
      const strangers = stranger.issue("stranger");
      for (const args of [
        tls,
        [...tls, `-tls-client-cert=${strangers.certFile}`, `-tls-client-key=${strangers.keyFile}`],
      ]) {
        const refused = await probe(app.port, args);
        expect(refused.code).not.toBe(SERVING);
        expect([CONNECTION_FAILED, RPC_FAILED]).toContain(refused.code);
      }
    } finally {
      await app.stop();
    }
  });

  it("the whole server NOT_SERVING while its database does not answer (MariaDB stopped)", async () => {
    const mariadb = await startMariaDb();
    await createDatabase(mariadb.port, "plans");
    const app = await replica("mariadb", {
      PLAN_DATABASE_URL: mariadb.urlFor("plans"),
      PLAN_HEALTH_INTERVAL_MS: "100",
    });
    try {
      expect((await probe(app.port, [])).code).toBe(SERVING);
      await mariadb.stop();
      await waitFor("NOT_SERVING", async () => (await probe(app.port, [])).code === UNHEALTHY, 20_000);
      const down = await probe(app.port, ["-service=taskplans.v1.PlanService"]);
      expect([down.code, (down.stdout + down.stderr).trim()]).toEqual([
        UNHEALTHY,
        'service unhealthy (responded with "NOT_SERVING")',
      ]);
    } finally {
      await app.stop();
      await mariadb.stop();
    }
  });
});
