/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped JSON read field by field */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { createConnection } from "mysql2/promise";
import { CHART, renderChart, ROOT } from "../../harness/kube/helm";
import { type ChannelCredentials, credentials, status } from "@grpc/grpc-js";
import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";
import { createClient } from "@taskplans/client";
import {
  type ContainerSpec,
  type ExternalSecrets,
  type KubeObject,
  type PodVolume,
  probeOnce,
  probeUntilSuccess,
  resolveEnv,
  resolveSecretMounts,
  type RunningContainer,
  startContainer,
} from "../../harness/kube/kube-container";
import { makeCa } from "../../harness/identity/pki";
import { createDatabase, type MariaDb, startMariaDb } from "../../harness/databases/mariadb";
import { createPodNetwork, type Pod, type PodNetwork } from "../../harness/network/pod-network";
import { stopProcess } from "../../harness/servers/processes";
import { startRedisNodes, type RedisNode } from "../../harness/databases/redis";
import { connect, rpcError } from "../../harness/calls/rpc";
import { buildRuntimeTree, type RuntimeTree } from "../../harness/kube/runtime-tree";

// Every container the chart defines is run as rendered: its command and args over the image's
// ENTRYPOINT/CMD, its environment resolved from the rendered ConfigMap and Secrets (or the
// operator's existing secrets), as the image's user in a reproduction of the image's runtime tree,
// each pod in its own network namespace (so the chart's fixed ports 50051/9464 are used as is).

const AUTH_SECRET = "chart-runtime-secret-0123456789-abcdef";
const DB_USER = { name: "taskplans", password: "taskplans-pw" };

let network: PodNetwork;
let mariadb: MariaDb;
let redis: RedisNode[];
let tree: RuntimeTree;
let logDir: string;
const containers: RunningContainer[] = [];

beforeAll(async () => {
  network = createPodNetwork();
  logDir = mkdtempSync(join(tmpdir(), "taskplans-chart-run-"));
  [mariadb, redis] = await Promise.all([
    startMariaDb({ alsoListenOn: network.hostAddress }),
    startRedisNodes(3, { host: network.hostAddress }),
  ]);
  const root = await createConnection({ host: "127.0.0.1", port: mariadb.port, user: "root" });
  await root.query(`CREATE USER '${DB_USER.name}'@'%' IDENTIFIED BY '${DB_USER.password}'`);
  await root.query(`GRANT ALL ON *.* TO '${DB_USER.name}'@'%'`);
  await root.end();
  tree = buildRuntimeTree(ROOT);
}, 300_000);

afterAll(async () => {
  await Promise.all(containers.map((container) => stopProcess(container.child, 30_000)));
  await Promise.all([mariadb?.stop(), ...(redis ?? []).map((node) => node.stop())]);
  tree?.remove();
  network?.close();
  rmSync(logDir, { recursive: true, force: true });
});

async function newDatabaseUrl(): Promise<string> {
  const name = `chart_${Date.now().toString(36)}${Math.floor(Math.random() * 1e6)}`;
  await createDatabase(mariadb.port, name);
  return `mysql://${DB_USER.name}:${DB_USER.password}@${network.hostAddress}:${mariadb.port}/${name}`;
}

const redisUrls = () => redis.map((node) => node.url).join(",");

function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("chart-test")
    .setIssuer("https://auth.example.com/")
    .setAudience("taskplans")
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(AUTH_SECRET));
}

/** One rendered release: its objects and the secrets that exist outside it. */
interface Release {
  readonly objects: (KubeObject & Record<string, any>)[];
  readonly secrets: ExternalSecrets;
  /** Bearer token for this release's write and read (null when auth is off). */
  readonly token: string | null;
  /** With TLS on: how a caller dials (its credentials, the name the certificate carries). */
  readonly tls?: {
    readonly credentials: () => ChannelCredentials;
    readonly serverName: string;
    readonly ca: Buffer;
  };
}

const byKind = (release: Release, kind: string) => release.objects.filter((o) => o.kind === kind);
const podSpecOf = (object: any) => object.spec.template?.spec ?? object.spec;
const hookOf = (object: KubeObject) => object.metadata.annotations?.["helm.sh/hook"] ?? "";

function run(
  release: Release,
  container: ContainerSpec,
  pod: Pod,
  volumes: PodVolume[] = [],
): RunningContainer {
  const env = resolveEnv(container, release.objects, release.secrets, tree.env);
  const mounts = resolveSecretMounts(container, volumes, release.objects, release.secrets);
  const running = startContainer(
    pod,
    tree,
    container,
    env,
    join(logDir, `${pod.name}-${container.name}.log`),
    mounts,
  );
  containers.push(running); // stopped in afterAll whatever a test left behind
  return running;
}

/** Starts a Deployment replica in a new pod and waits for its startup probe, as the kubelet does. */
async function startReplicaPod(
  release: Release,
): Promise<{ pod: Pod; container: RunningContainer; spec: ContainerSpec }> {
  const [deployment] = byKind(release, "Deployment");
  const spec = podSpecOf(deployment).containers[0] as ContainerSpec;
  const pod = network.addPod();
  const container = run(release, spec, pod, podSpecOf(deployment).volumes);
  const started = await Promise.race([
    probeUntilSuccess({ pod, container }, spec.startupProbe!),
    container.exited().then(() => false),
  ]);
  if (!started)
    throw new Error(`startup probe failed: ${readFileSync(container.logFile, "utf8").slice(-3000)}`);
  return { pod, container, spec };
}

/** The client package connected to a replica pod as the release's callers reach it (TLS when it is on). */
const clientsOf = (release: Release, pod: Pod) =>
  release.tls
    ? createClient(`${pod.address}:50051`, {
        token: release.token ?? undefined,
        defaultTimeoutMs: 0,
        retry: false,
        credentials: release.tls.credentials(),
        channelOptions: { "grpc.ssl_target_name_override": release.tls.serverName },
      })
    : connect(50051, release.token ?? undefined, pod.address);

async function writeAndRead(pod: Pod, release: Release): Promise<void> {
  const clients = clientsOf(release, pod);
  try {
    const { task } = await clients.tasks.createTask({
      taskId: `t-${pod.name}`,
      workspaceId: "ws-1",
      title: "T",
    });
    const created = await clients.plans.createPlan({ taskId: task?.taskId, content: "# Plan\n" });
    await clients.plans.updatePlan({ taskId: task?.taskId, content: "- step", mode: 2 });
    const read = await clients.plans.getPlan({ taskId: task?.taskId });
    expect([created.plan?.version, read.plan?.version, read.plan?.content]).toEqual([
      1,
      2,
      "# Plan\n\n- step",
    ]);
  } finally {
    clients.close();
  }
}

/** With TLS on, a plaintext caller is refused and /metrics answers over HTTPS only. */
async function expectTlsOnly(pod: Pod, release: Release): Promise<void> {
  const plaintext = connect(50051, release.token ?? undefined, pod.address);
  try {
    expect((await rpcError(plaintext.plans.getPlan({ taskId: `t-${pod.name}` }))).code).toBe(
      status.UNAVAILABLE,
    );
  } finally {
    plaintext.close();
  }
  const metrics = (secure: boolean) =>
    new Promise<number>((resolve) => {
      const get = secure ? httpsGet : httpGet;
      const options = {
        host: pod.address,
        port: 9464,
        path: "/metrics",
        ca: release.tls?.ca,
        servername: release.tls?.serverName,
      };
      get(options, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).once("error", () => resolve(-1));
    });
  expect([await metrics(true), await metrics(false)]).toEqual([200, -1]);
}

/** Runs the migration Job's container to its end; resolves its exit code and run time. */
async function runMigrationJob(
  release: Release,
): Promise<{ code: number; seconds: number; deadline: number }> {
  const [job] = byKind(release, "Job") as any[];
  const container = podSpecOf(job).containers[0] as ContainerSpec;
  const started = Date.now();
  const running = run(release, container, network.addPod());
  const deadline = job.spec.activeDeadlineSeconds as number;
  const timer = setTimeout(() => running.child.kill("SIGKILL"), deadline * 1000);
  const code = await running.exited();
  clearTimeout(timer);
  if (code !== 0) throw new Error(`migration Job failed: ${readFileSync(running.logFile, "utf8")}`);
  return { code, seconds: (Date.now() - started) / 1000, deadline };
}

const RELEASES: [string, () => Promise<Release>][] = [
  [
    "default values with MySQL and Redis given (chart-managed Secret)",
    async () => {
      const values = join(logDir, `values-${Date.now()}.yaml`);
      writeFileSync(
        values,
        JSON.stringify({
          secrets: { PLAN_DATABASE_URL: await newDatabaseUrl(), PLAN_REDIS_URLS: redisUrls() },
        }),
      );
      return { objects: renderChart("-f", values), secrets: {}, token: null };
    },
  ],
  [
    "ci/production-values.yaml with TLS and mTLS from an existing kubernetes.io/tls Secret, and HTTPS /metrics",
    async () => {
      const ca = makeCa(logDir, `ca-${Date.now()}`);
      const served = ca.issue(`served-${Date.now()}`, {
        names: ["rel-taskplans", "rel-taskplans.default.svc"],
      });
      const caller = ca.issue(`caller-${Date.now()}`);
      const read = (file: string) => readFileSync(file, "utf8");
      return {
        objects: renderChart(
          "-f",
          join(CHART, "ci", "production-values.yaml"),
          ...[
            "tls.enabled=true",
            "tls.secretName=taskplans-tls",
            "tls.clientAuth.enabled=true",
            "tls.metrics=true",
          ].flatMap((set) => ["--set", set]),
        ),
        secrets: {
          "taskplans-mysql": { url: await newDatabaseUrl() },
          "taskplans-redis": { urls: redisUrls() },
          "taskplans-auth": { "jwt-secret": AUTH_SECRET },
          "taskplans-release-probe": { token: await token({ kind: "agent", name: "probe", workspaces: [] }) },
          "taskplans-tls": {
            "tls.crt": read(served.certFile),
            "tls.key": read(served.keyFile),
            "ca.crt": read(ca.certFile),
          },
        },
        token: await token({ kind: "user", name: "Operator", workspaces: ["ws-1"] }),
        tls: {
          credentials: () =>
            credentials.createSsl(ca.pem(), readFileSync(caller.keyFile), readFileSync(caller.certFile)),
          serverName: "rel-taskplans",
          ca: ca.pem(),
        },
      };
    },
  ],
  [
    "ci/production-values.yaml with existing secrets (auth on)",
    async () => ({
      objects: renderChart("-f", join(CHART, "ci", "production-values.yaml")),
      secrets: {
        "taskplans-mysql": { url: await newDatabaseUrl() },
        "taskplans-redis": { urls: redisUrls() },
        "taskplans-auth": { "jwt-secret": AUTH_SECRET },
        "taskplans-release-probe": { token: await token({ kind: "agent", name: "probe", workspaces: [] }) },
      },
      token: await token({ kind: "user", name: "Operator", workspaces: ["ws-1"] }),
    }),
  ],
];

describe("the image's runtime tree (the Dockerfile's runtime stage, reproduced without a container engine)", () => {
  it("runs as the image's non-root user, who cannot write the tree, and holds no devDependencies", () => {
    expect([tree.uid, tree.gid]).toEqual([10001, 10001]);
    const asUser = (command: string) =>
      spawnSync(
        "setpriv",
        [`--reuid=${tree.uid}`, `--regid=${tree.gid}`, "--clear-groups", "sh", "-c", command],
        {
          cwd: tree.root,
          encoding: "utf8",
        },
      ).status;
    expect(
      asUser("touch dist/src/bin/main.js || touch package.json || mkdir node_modules/x || touch x"),
    ).not.toBe(0);
    expect(asUser("touch var/writable && rm var/writable")).toBe(0); // the embedded database's directory
    const packageJson = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    const present = spawnSync("ls", [join(tree.root, "node_modules")], { encoding: "utf8" }).stdout.split(
      "\n",
    );
    for (const dev of ["typescript", "jest", "ts-proto", "eslint", "prettier"]) {
      expect([dev, Object.keys(packageJson.devDependencies).includes(dev), present.includes(dev)]).toEqual([
        dev,
        true,
        false,
      ]);
    }
  });

  it("serves on the embedded database with the chart's default values, as the image's user", async () => {
    const release: Release = { objects: renderChart(), secrets: {}, token: null };
    expect(byKind(release, "Job")).toHaveLength(0);
    const { pod, container } = await startReplicaPod(release);
    await writeAndRead(pod, release);
    container.child.kill("SIGTERM");
    expect(await container.exited()).toBe(0);
  });
});

describe.each(RELEASES)("the chart's containers, run as rendered: %s", (_name, renderRelease) => {
  let release: Release;
  beforeAll(async () => {
    release = await renderRelease();
  });

  it("keeps the migration Job and the test pod out of the Services' endpoints", () => {
    const selectors = byKind(release, "Service").map((service: any) => service.spec.selector);
    const auxiliary = [...byKind(release, "Job"), ...release.objects.filter((o) => hookOf(o) === "test")];
    expect(auxiliary).toHaveLength(2);
    for (const object of auxiliary) {
      const labels = (object as any).spec.template?.metadata.labels ?? (object as any).metadata.labels;
      for (const selector of selectors) {
        expect(Object.entries(selector).every(([key, value]) => labels[key] === value)).toBe(false);
      }
    }
  });

  it("the migration Job exits 0 before its activeDeadlineSeconds", async () => {
    const job = await runMigrationJob(release);
    expect(job.code).toBe(0);
    expect(job.seconds).toBeLessThan(job.deadline);
  });

  it("a replica passes its startup, readiness and liveness probes, serves a write and a read, and drains on SIGTERM", async () => {
    const { pod, container, spec } = await startReplicaPod(release);
    expect(await probeOnce({ pod, container }, spec.readinessProbe!)).toBe(true);
    expect(await probeOnce({ pod, container }, spec.livenessProbe!)).toBe(true);
    await writeAndRead(pod, release);
    if (release.tls) await expectTlsOnly(pod, release);
    const grace = podSpecOf(byKind(release, "Deployment")[0]).terminationGracePeriodSeconds as number;
    const started = Date.now();
    container.child.kill("SIGTERM");
    const timer = setTimeout(() => container.child.kill("SIGKILL"), grace * 1000);
    const code = await container.exited();
    clearTimeout(timer);
    expect([code, (Date.now() - started) / 1000 < grace]).toEqual([0, true]);
    expect(await probeOnce({ pod, container }, spec.livenessProbe!)).toBe(false); // it is really gone
  });

  it("two replicas started together serve writes to one task with one serial history, and helm test passes", async () => {
    const replicas = await Promise.all([startReplicaPod(release), startReplicaPod(release)]);
    try {
      const [a, b] = replicas.map(({ pod }) => clientsOf(release, pod));
      try {
        const taskId = `shared-${Date.now()}`;
        await a!.tasks.createTask({ taskId, workspaceId: "ws-1" });
        await b!.plans.createPlan({ taskId, content: "# Shared" });
        const fragments = Array.from({ length: 40 }, (_, i) => `- entry ${i}`);
        const acks = await Promise.all(
          fragments.map((content, i) => (i % 2 ? a! : b!).plans.updatePlan({ taskId, content, mode: 2 })),
        );
        const versions = acks.map((ack) => ack.plan?.version ?? 0).sort((x, y) => x - y);
        expect(versions).toEqual(Array.from({ length: 40 }, (_, i) => i + 2)); // each version once
        const { plan } = await a!.plans.getPlan({ taskId });
        expect(plan?.version).toBe(41);
        for (const fragment of fragments)
          expect(plan?.content.split(`${fragment}\n`).length ?? 0).toBeLessThanOrEqual(2);
        expect(fragments.every((fragment) => plan?.content.includes(fragment))).toBe(true);
      } finally {
        a?.close();
        b?.close();
      }
      // `helm test`: the hook pod reaches the release through its Service name (one replica's address).
      const [hook] = release.objects.filter((o) => hookOf(o) === "test") as any[];
      const hookSpec = podSpecOf(hook).containers[0] as ContainerSpec;
      const service = byKind(release, "Service").find((s: any) => s.spec.clusterIP !== "None")!;
      const hookPod = network.addPod();
      hookPod.setHosts({ [service.metadata.name]: replicas[0]!.pod.address });
      const probe = run(release, hookSpec, hookPod, podSpecOf(hook).volumes ?? []);
      expect(await probe.exited()).toBe(0);
      expect(readFileSync(probe.logFile, "utf8")).toMatch(
        /^ok: .*SERVING; a plan read answered (NOT_FOUND|PERMISSION_DENIED).*; .*:8080: a plan read over HTTP \(Connect GET\) answered (not_found|permission_denied)/m,
      );
    } finally {
      await Promise.all(replicas.map(({ container }) => stopProcess(container.child, 30_000)));
    }
  });
});
