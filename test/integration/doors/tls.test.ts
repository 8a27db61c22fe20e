import { credentials, type ChannelCredentials, status } from "@grpc/grpc-js";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { createClient, type TaskPlansClient } from "@taskplans/client";
import { type RunningApp, startApp } from "../../../src/app";
import { loadConfig } from "../../../src/config/config";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { checkHealth, healthClient, listServices, reflectionClient } from "../../harness/calls/grpc-clients";
import { type CertFiles, makeCa, type TestCa } from "../../harness/identity/pki";
import { cachedTool } from "../../harness/kube/helm";
import { runToExit, waitFor } from "../../harness/servers/processes";
import { rpcError } from "../../harness/calls/rpc";
import { curl } from "../../harness/calls/curl";
import { randomId } from "../../harness/servers/test-app";
import { Watcher } from "../../harness/calls/watcher";

// The service over TLS and mTLS as an operator configures it: PEM files named by PLAN_GRPC_TLS_*,
// read again every PLAN_TLS_RELOAD_INTERVAL_MS, on the embedded SQLite default. Certificates come
// from a throwaway CA made with the openssl command line.
let dir: string;
let ca: TestCa;
let stranger: CertFiles; // a client certificate signed by another CA
const RELOAD_MS = 200;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "taskplans-tls-"));
  ca = makeCa(dir, "ca");
  stranger = makeCa(dir, "other-ca").issue("stranger");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files a replica serves from (the test replaces their content, as a Secret update would). */
function servedFiles(name: string, from: CertFiles): { cert: string; key: string } {
  const served = { cert: join(dir, `${name}-served.crt`), key: join(dir, `${name}-served.key`) };
  copyFileSync(from.certFile, served.cert);
  copyFileSync(from.keyFile, served.key);
  return served;
}

async function startTls(name: string, env: Record<string, string>) {
  const { logger, lines } = capturingLogger();
  const config = loadConfig({
    PLAN_GRPC_ADDRESS: "127.0.0.1:0",
    PLAN_HTTP_ADDRESS: "127.0.0.1:0",
    PLAN_DATABASE_URL: `sqlite:${join(dir, `${name}.sqlite`)}`,
    PLAN_METRICS_ADDRESS: "127.0.0.1:0",
    PLAN_RATE_LIMIT_WRITES: "0",
    PLAN_TLS_RELOAD_INTERVAL_MS: String(RELOAD_MS),
    ...env,
  });
  const app: RunningApp = await startApp(config, { logger });
  return { app, lines };
}

/** The real grpcurl (npm test installs it into the tool cache). */
const grpcurl = (args: string[]) => runToExit([cachedTool("grpcurl"), ...args], { timeoutMs: 30_000 });

const trusting = (client?: CertFiles): ChannelCredentials =>
  credentials.createSsl(
    ca.pem(),
    client ? readFileSync(client.keyFile) : null,
    client ? readFileSync(client.certFile) : null,
  );

const clientOf = (port: number, creds: ChannelCredentials): TaskPlansClient =>
  createClient(`127.0.0.1:${port}`, { credentials: creds, defaultTimeoutMs: 10_000, retry: false });

/** The serial number of the certificate a new TLS connection to `port` is served. */
function servedSerial(port: number, client?: CertFiles): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      {
        host: "127.0.0.1",
        port,
        ca: ca.pem(),
        ALPNProtocols: ["h2"],
        ...(client ? { cert: readFileSync(client.certFile), key: readFileSync(client.keyFile) } : {}),
      },
      () => {
        resolve(socket.getPeerCertificate().serialNumber.toUpperCase());
        socket.end();
      },
    );
    socket.once("error", reject);
  });
}

async function writePlan(client: TaskPlansClient, content: string): Promise<string> {
  const taskId = randomId("task");
  await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "tls" });
  await client.plans.createPlan({ taskId, content });
  return taskId;
}

describe("TLS on gRPC (PLAN_GRPC_TLS_CERT_FILE, PLAN_GRPC_TLS_KEY_FILE)", () => {
  let app: RunningApp;
  /** A counter's value on the replica's /metrics (plaintext here), 0 before its first count. */
  const metric = async (series: string) => {
    const body = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
    const line = body.split("\n").find((l) => l.startsWith(`${series} `));
    return Number(line?.split(" ")[1] ?? 0);
  };
  let lines: string[];
  let served: { cert: string; key: string };

  beforeAll(async () => {
    served = servedFiles("tls", ca.issue("server-1"));
    ({ app, lines } = await startTls("tls", {
      PLAN_GRPC_TLS_CERT_FILE: served.cert,
      PLAN_GRPC_TLS_KEY_FILE: served.key,
    }));
  });
  afterAll(() => app.stop());

  it("serves a client that trusts the CA; health and reflection answer over TLS; a plaintext client gets UNAVAILABLE and writes nothing", async () => {
    const client = clientOf(app.port, trusting());
    const plaintext = clientOf(app.port, credentials.createInsecure());
    try {
      const taskId = await writePlan(client, "# over TLS\n");
      expect((await client.plans.getPlan({ taskId })).plan?.content).toBe("# over TLS\n");

      const health = healthClient(app.port, "127.0.0.1", trusting());
      const reflection = reflectionClient(app.port, trusting());
      try {
        expect(await checkHealth(health, "taskplans.v1.PlanService")).toBe("SERVING");
        expect(await listServices(reflection)).toContain("taskplans.v1.PlanService");
      } finally {
        health.close();
        reflection.close();
      }

      const refused = await rpcError(plaintext.plans.updatePlan({ taskId, content: "# plaintext\n" }));
      expect(refused.code).toBe(status.UNAVAILABLE);
      const after = await client.plans.getPlan({ taskId });
      expect([after.plan?.content, after.plan?.version]).toEqual(["# over TLS\n", 1]);
      expect((await client.plans.listPlanRevisions({ taskId })).revisions).toHaveLength(1);
      expect(lines.join("")).toContain('"tls":"server"');
    } finally {
      client.close();
      plaintext.close();
    }
  });

  it("serves the HTTP listener over HTTPS with the same certificate (curl --cacert); plain HTTP gets no answer", async () => {
    const client = clientOf(app.port, trusting());
    try {
      const taskId = await writePlan(client, "# over https\n");
      const url = `https://127.0.0.1:${app.httpPort}/taskplans.v1.PlanService/GetPlan`;
      const body = JSON.stringify({ taskId });
      const read = await curl([
        "--cacert",
        ca.certFile,
        "-H",
        "content-type: application/json",
        "-d",
        body,
        url,
      ]);
      expect([read.status, read.json]).toEqual([
        200,
        expect.objectContaining({ plan: expect.objectContaining({ content: "# over https\n" }) }),
      ]);
      await expect(curl(["-H", "content-type: application/json", "-d", body, url])).rejects.toThrow(
        /certificate/i,
      );
      await expect(
        curl(["-H", "content-type: application/json", "-d", body, url.replace("https:", "http:")]),
      ).rejects.toThrow();
    } finally {
      client.close();
    }
  });

  it("answers grpcurl -cacert as operators run it: reflection lists the services and health reports SERVING; without the CA the certificate is refused", async () => {
    const target = `127.0.0.1:${app.port}`;
    const listed = await grpcurl(["-cacert", ca.certFile, target, "list"]);
    expect([listed.code, listed.stdout]).toEqual([0, expect.stringContaining("taskplans.v1.PlanService\n")]);
    const health = await grpcurl([
      "-cacert",
      ca.certFile,
      "-d",
      '{"service":"taskplans.v1.PlanService"}',
      target,
      "grpc.health.v1.Health/Check",
    ]);
    expect([health.code, JSON.parse(health.stdout)]).toEqual([0, { status: "SERVING" }]);
    const untrusted = await grpcurl([target, "list"]);
    expect(untrusted.code).not.toBe(0);
    expect(untrusted.stderr).toMatch(/certificate/);
  });

  it("serves a rotated certificate to new connections without a restart, while an established stream keeps delivering", async () => {
    const client = clientOf(app.port, trusting());
    try {
      const before = await servedSerial(app.port);
      const taskId = await writePlan(client, "# before rotation\n");
      const watcher = new Watcher(client.plans.watchPlan({ taskId, afterVersion: 1 }));
      await client.plans.updatePlan({ taskId, content: "# version 2\n", expectedVersion: 1 });
      await watcher.received(1);

      const next = ca.issue("server-2");
      // Kubernetes swaps a Secret's files at once; the key is written first here, so the pair is
      // briefly mismatched and must be held back until the certificate follows.
      copyFileSync(next.keyFile, served.key);
      copyFileSync(next.certFile, served.cert);
      await waitFor(
        "the rotated certificate to be served",
        async () => (await servedSerial(app.port)) === next.serial,
        10_000,
      );
      expect(before).not.toBe(next.serial);

      await client.plans.updatePlan({ taskId, content: "# version 3\n", expectedVersion: 2 });
      expect((await watcher.received(2)).map((change) => change.plan?.version)).toEqual([2, 3]);
      expect(watcher.end).toBeNull(); // the stream opened before the rotation is still open
      watcher.cancel();
      expect(
        lines.some((line) => line.includes("TLS certificate reloaded") && line.includes(next.serial)),
      ).toBe(true);
    } finally {
      client.close();
    }
  });

  it("keeps the certificate in use when the new files are not a pair, logs one error, and takes the next good pair", async () => {
    const inUse = await servedSerial(app.port);
    const logged = lines.length; // the previous test's rotation may have logged a passing mismatch
    const mismatched = ca.issue("server-3");
    const other = ca.issue("server-4");
    writeFileSync(served.cert, readFileSync(mismatched.certFile));
    writeFileSync(served.key, readFileSync(other.keyFile));
    await waitFor(
      "the bad pair to be noticed",
      async () => lines.slice(logged).some((line) => line.includes("TLS files changed but are not usable")),
      10_000,
    );
    await new Promise((resolve) => setTimeout(resolve, RELOAD_MS * 5)); // several more passes
    expect(await servedSerial(app.port)).toBe(inUse);
    const errors = lines
      .slice(logged)
      .filter((line) => line.includes("TLS files changed but are not usable"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(
      "PLAN_GRPC_TLS_KEY_FILE is not the key of the certificate in PLAN_GRPC_TLS_CERT_FILE",
    );
    const client = clientOf(app.port, trusting());
    try {
      await writePlan(client, "# still served\n");
    } finally {
      client.close();
    }

    writeFileSync(served.key, readFileSync(mismatched.keyFile));
    await waitFor(
      "the good pair",
      async () => (await servedSerial(app.port)) === mismatched.serial,
      10_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${lines.filter((l) => l.includes("TLS")).join("")}`);
    });
  });

  it("does not load an expired pair written during a rotation: the pair in use stays served, one warning is logged and the refusal counted", async () => {
    const inUse = await servedSerial(app.port);
    const logged = lines.length;
    const refusals = () => metric('taskplans_tls_reloads_total{outcome="expired"}');
    const before = await refusals();
    const expired = ca.issue("server-expired", {
      validity: { from: "20200101000000Z", to: "20200201000000Z" },
    });
    copyFileSync(expired.keyFile, served.key);
    copyFileSync(expired.certFile, served.cert);
    const warned = () =>
      lines.slice(logged).filter((line) => line.includes("TLS certificate expired or not valid yet"));
    await waitFor("the expired pair to be refused", async () => warned().length > 0, 10_000);
    await new Promise((resolve) => setTimeout(resolve, RELOAD_MS * 5)); // several more passes
    expect(await servedSerial(app.port)).toBe(inUse);
    expect(warned()).toHaveLength(1);
    expect(warned()[0]).toContain('"level":40');
    expect(warned()[0]).toContain("PLAN_GRPC_TLS_CERT_FILE");
    expect(lines.slice(logged).some((line) => line.includes("TLS certificate reloaded"))).toBe(false);
    expect(await refusals()).toBe(before + 1);
    const client = clientOf(app.port, trusting());
    try {
      await writePlan(client, "# still served\n");
    } finally {
      client.close();
    }

    const renewed = ca.issue("server-renewed");
    copyFileSync(renewed.keyFile, served.key);
    copyFileSync(renewed.certFile, served.cert);
    await waitFor("the renewed pair", async () => (await servedSerial(app.port)) === renewed.serial, 10_000);
  });
});

describe("mTLS (PLAN_GRPC_TLS_CLIENT_CA_FILE)", () => {
  let app: RunningApp;
  let lines: string[];
  let member: CertFiles;

  beforeAll(async () => {
    const served = servedFiles("mtls", ca.issue("mtls-server"));
    member = ca.issue("client-1");
    ({ app, lines } = await startTls("mtls", {
      PLAN_GRPC_TLS_CERT_FILE: served.cert,
      PLAN_GRPC_TLS_KEY_FILE: served.key,
      PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
    }));
  });
  afterAll(() => app.stop());

  it("serves a client whose certificate the CA signed, and refuses one without a certificate or with another CA's, writing nothing", async () => {
    const accepted = clientOf(app.port, trusting(member));
    const taskId = await writePlan(accepted, "# mutual\n");
    try {
      for (const refusedCreds of [trusting(), trusting(stranger)]) {
        const refused = clientOf(app.port, refusedCreds);
        try {
          const error = await rpcError(refused.plans.updatePlan({ taskId, content: "# refused\n" }));
          expect(error.code).toBe(status.UNAVAILABLE);
        } finally {
          refused.close();
        }
      }
      const after = await accepted.plans.getPlan({ taskId });
      expect([after.plan?.content, after.plan?.version]).toEqual(["# mutual\n", 1]);
      expect((await accepted.plans.listPlanRevisions({ taskId })).revisions).toHaveLength(1);
      expect(lines.join("")).toContain('"tls":"mutual"');
      const target = `127.0.0.1:${app.port}`;
      const withCert = await grpcurl([
        "-cacert",
        ca.certFile,
        "-cert",
        member.certFile,
        "-key",
        member.keyFile,
        target,
        "list",
      ]);
      expect([withCert.code, withCert.stdout]).toEqual([
        0,
        expect.stringContaining("taskplans.v1.PlanService\n"),
      ]);
      const withoutCert = await grpcurl(["-cacert", ca.certFile, target, "list"]);
      expect(withoutCert.code).not.toBe(0);
      // The HTTP listener asks for the same client certificates.
      const url = `https://127.0.0.1:${app.httpPort}/taskplans.v1.PlanService/GetPlan`;
      const http = [
        "--cacert",
        ca.certFile,
        "-H",
        "content-type: application/json",
        "-d",
        JSON.stringify({ taskId }),
        url,
      ];
      const viaHttp = await curl(["--cert", member.certFile, "--key", member.keyFile, ...http]);
      expect([viaHttp.status, viaHttp.json]).toEqual([
        200,
        expect.objectContaining({ plan: expect.objectContaining({ version: "1" }) }),
      ]);
      await expect(curl(http)).rejects.toThrow();
      await expect(curl(["--cert", stranger.certFile, "--key", stranger.keyFile, ...http])).rejects.toThrow();
    } finally {
      accepted.close();
    }
  });
});

describe("HTTPS for /metrics (PLAN_METRICS_TLS_CERT_FILE, PLAN_METRICS_TLS_KEY_FILE)", () => {
  it("serves /metrics over HTTPS with the configured certificate", async () => {
    const served = servedFiles("metrics", ca.issue("metrics-server"));
    const { app } = await startTls("metrics", {
      PLAN_METRICS_TLS_CERT_FILE: served.cert,
      PLAN_METRICS_TLS_KEY_FILE: served.key,
    });
    try {
      const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port: app.metricsPort ?? 0, path: "/metrics", ca: ca.pem() },
          (res) => {
            let text = "";
            res.on("data", (chunk: Buffer) => (text += chunk.toString()));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.once("error", reject);
        req.end();
      });
      expect(body.status).toBe(200);
      expect(body.text).toContain("# TYPE");
    } finally {
      await app.stop();
    }
  });
});

describe("TLS settings that cannot work are refused at start with one line naming the setting", () => {
  it.each([
    [
      { PLAN_GRPC_TLS_CERT_FILE: "/x.crt" },
      "set both PLAN_GRPC_TLS_CERT_FILE and PLAN_GRPC_TLS_KEY_FILE, or neither",
    ],
    [
      { PLAN_GRPC_TLS_CLIENT_CA_FILE: "/ca.crt" },
      "PLAN_GRPC_TLS_CLIENT_CA_FILE needs PLAN_GRPC_TLS_CERT_FILE",
    ],
    [
      { PLAN_METRICS_TLS_KEY_FILE: "/x.key" },
      "set both PLAN_METRICS_TLS_CERT_FILE and PLAN_METRICS_TLS_KEY_FILE",
    ],
  ])("%j", (env, message) => {
    expect(() => loadConfig({ ...env })).toThrow(message);
  });

  it("names the setting whose file is missing, is not PEM, is not the certificate's key, or holds a certificate expired or not valid yet", async () => {
    const server = ca.issue("bad-start");
    const expired = ca.issue("expired-start", {
      validity: { from: "20200101000000Z", to: "20200201000000Z" },
    });
    const future = ca.issue("future-start", { validity: { from: "20990101000000Z", to: "20990201000000Z" } });
    const other = ca.issue("bad-start-other");
    const garbage = join(dir, "garbage.pem");
    writeFileSync(garbage, "not a certificate\n");
    const cases: [Record<string, string>, string][] = [
      [
        { PLAN_GRPC_TLS_CERT_FILE: join(dir, "missing.crt"), PLAN_GRPC_TLS_KEY_FILE: server.keyFile },
        "PLAN_GRPC_TLS_CERT_FILE",
      ],
      [
        { PLAN_GRPC_TLS_CERT_FILE: server.certFile, PLAN_GRPC_TLS_KEY_FILE: garbage },
        "PLAN_GRPC_TLS_KEY_FILE",
      ],
      [
        { PLAN_GRPC_TLS_CERT_FILE: server.certFile, PLAN_GRPC_TLS_KEY_FILE: other.keyFile },
        "is not the key of the certificate",
      ],
      [
        {
          PLAN_GRPC_TLS_CERT_FILE: server.certFile,
          PLAN_GRPC_TLS_KEY_FILE: server.keyFile,
          PLAN_GRPC_TLS_CLIENT_CA_FILE: garbage,
        },
        "PLAN_GRPC_TLS_CLIENT_CA_FILE",
      ],
      [
        { PLAN_GRPC_TLS_CERT_FILE: expired.certFile, PLAN_GRPC_TLS_KEY_FILE: expired.keyFile },
        `PLAN_GRPC_TLS_CERT_FILE ${expired.certFile} expired on Feb  1 00:00:00 2020 GMT`,
      ],
      [
        { PLAN_GRPC_TLS_CERT_FILE: future.certFile, PLAN_GRPC_TLS_KEY_FILE: future.keyFile },
        `PLAN_GRPC_TLS_CERT_FILE ${future.certFile} is not valid before Jan  1 00:00:00 2099 GMT`,
      ],
    ];
    for (const [env, message] of cases) {
      await expect(startTls(randomId("bad"), env)).rejects.toThrow(message);
    }
  });
});
