import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CHART, helmBinary } from "../harness/kube/helm";

/**
 * The test cluster scripts/kube/up.sh started (KUBECONFIG points at it): kubectl and helm against
 * it, and the waits the scenarios share. Every call throws with the tool's stderr when it fails.
 */

const KUBE_RUN = process.env.KUBE_RUN ?? "/run/taskplans-kube";

/**
 * Runs kubectl or helm without blocking the event loop (the load keeps running meanwhile); resolves
 * stdout, rejects with the tool's stderr (and, for helm, the namespace's latest events).
 */
function run(tool: "kubectl" | "helm", args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool === "helm" ? helmBinary() : "kubectl", args, {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) return resolve(Buffer.concat(out).toString("utf8"));
      const why = tool === "helm" ? recentEvents(args) : "";
      reject(
        new Error(`${tool} ${args.join(" ")} failed (${code}): ${Buffer.concat(err).toString("utf8")}${why}`),
      );
    });
    child.stdin.end(input ?? "");
  });
}

/** The namespace's latest events and the migration Job's log, to say why a helm command failed. */
function recentEvents(args: readonly string[]): string {
  const namespace = args[args.indexOf("-n") + 1];
  if (!namespace) return "";
  const read = (...a: string[]) => spawnSync("kubectl", ["-n", namespace, ...a], { encoding: "utf8" }).stdout;
  const events = read("get", "events", "--sort-by=.lastTimestamp").split("\n").slice(-15).join("\n");
  const job = read("logs", "-l", "app.kubernetes.io/component=migrate", "--tail=5");
  return `\nlatest events:\n${events}\nmigration Job log:\n${job}`;
}

export const kubectl = (args: readonly string[], input?: string): Promise<string> =>
  run("kubectl", args, input);
export const helmIn = (args: readonly string[]): Promise<string> => run("helm", args);

export async function kubectlJson<T>(args: readonly string[]): Promise<T> {
  return JSON.parse(await kubectl([...args, "-o", "json"])) as T;
}

/**
 * The reasons of the events of the release's migration Job (SuccessfulCreate, Completed, ...). The
 * hook deletes the Job once it succeeded (hook-succeeded); its events remain.
 */
export async function migrationJobEvents(namespace: string, release: string): Promise<string[]> {
  const events = await kubectlJson<{
    items: { reason: string; involvedObject: { kind: string; name: string } }[];
  }>(["get", "events", "-n", namespace]);
  return events.items
    .filter((e) => e.involvedObject.kind === "Job" && e.involvedObject.name === `${release}-migrate`)
    .map((e) => e.reason);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds; throws naming `what` after `limitMs`. */
export async function waitFor(
  what: string,
  limitMs: number,
  check: () => boolean | Promise<boolean>,
): Promise<void> {
  const until = Date.now() + limitMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet: an object that does not exist yet, an API call refused during a restart
    }
    if (Date.now() > until) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

/** Seconds since `start` (a Date.now()), with one decimal. */
export const secondsSince = (start: number): string => ((Date.now() - start) / 1000).toFixed(1);

/** The parts of a pod the scenarios read. */
export interface PodInfo {
  readonly metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  readonly spec: {
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
    containers: {
      name: string;
      image: string;
      securityContext?: {
        readOnlyRootFilesystem?: boolean;
        allowPrivilegeEscalation?: boolean;
        capabilities?: { drop?: string[] };
      };
    }[];
  };
  readonly status: {
    phase: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; restartCount: number; image: string }[];
  };
}

export async function podsOf(namespace: string, selector: string): Promise<PodInfo[]> {
  return (await kubectlJson<{ items: PodInfo[] }>(["get", "pods", "-n", namespace, "-l", selector])).items;
}

export const isReady = (pod: PodInfo): boolean =>
  !pod.metadata.deletionTimestamp &&
  (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

/** A namespace of its own for a scenario file, with the backends (MariaDB, three Redis) running in it. */
export interface Backends {
  readonly namespace: string;
  /** The database URL from the machine (the MariaDB Service's cluster IP, routed onto the bridge). */
  readonly databaseUrl: string;
  /** The Secret the chart takes the database and Redis URLs from (`existingSecrets`). */
  readonly secret: string;
}

export async function startBackends(namespace: string): Promise<Backends> {
  await kubectl(["create", "namespace", namespace]);
  // The database's host directory of an earlier run holds another password.
  rmSync(join(KUBE_RUN, "volumes", namespace), { recursive: true, force: true });
  const password = randomBytes(12).toString("hex");
  const manifest = readFileSync(join(__dirname, "dependencies.yaml"), "utf8")
    .replaceAll("${DB_PASSWORD}", password)
    .replaceAll("${DATA_DIR}", join(KUBE_RUN, "volumes", namespace));
  await kubectl(["apply", "-n", namespace, "-f", "-"], manifest);
  await kubectl(["rollout", "status", "-n", namespace, "deployment/mariadb", "--timeout=180s"]);
  await kubectl(["rollout", "status", "-n", namespace, "statefulset/redis", "--timeout=120s"]);
  const ip = await kubectl([
    "get",
    "service",
    "-n",
    namespace,
    "mariadb",
    "-o",
    "jsonpath={.spec.clusterIP}",
  ]);
  return {
    namespace,
    databaseUrl: `mysql://taskplans:${password}@${ip}:3306/taskplans`,
    secret: "taskplans-backends",
  };
}

/** Deletes a scenario's namespace (KUBE_KEEP_NAMESPACES=1 keeps it, to look at it after a run). */
export function deleteNamespace(namespace: string): void {
  if (process.env.KUBE_KEEP_NAMESPACES === "1") return;
  spawnSync("kubectl", ["delete", "namespace", namespace, "--wait=true", "--timeout=120s"], {
    encoding: "utf8",
  });
}

/** Values every scenario installs with; `extra` are further `--set` pairs. */
export function releaseValues(backends: Backends, extra: readonly string[] = []): string[] {
  const sets = [
    "image.repository=localhost/taskplans",
    "image.tag=test",
    "image.pullPolicy=Never",
    `existingSecrets.database.name=${backends.secret}`,
    `existingSecrets.redis.name=${backends.secret}`,
    "autoscaling.enabled=true",
    "autoscaling.minReplicas=3",
    "autoscaling.maxReplicas=3",
    // Every write one revision, so the checker sees every commit.
    "config.PLAN_COALESCE_WINDOW_MS=0",
    "config.PLAN_LOCK_LEASE_MS=2000",
    "config.PLAN_WATCH_POLL_INTERVAL_MS=500",
    "config.PLAN_HEALTH_INTERVAL_MS=1000",
    ...extra,
  ];
  return sets.flatMap((s) => ["--set", s]);
}

/**
 * `helm install` or `helm upgrade` of `release` in `namespace` with the scenarios' values and `extra`,
 * waiting (up to 5 minutes) for its hooks and rollout; resolves the seconds it took.
 */
export async function helmRelease(
  verb: "install" | "upgrade",
  where: { namespace: string; release: string; chart?: string },
  backends: Backends,
  extra: readonly string[] = [],
): Promise<string> {
  const start = Date.now();
  const { namespace, release, chart = CHART } = where;
  await helmIn([
    verb,
    release,
    chart,
    "-n",
    namespace,
    "--wait",
    "--timeout",
    "5m",
    ...releaseValues(backends, extra),
  ]);
  return secondsSince(start);
}

/** The release's plain Service as host:port from the machine (kube-proxy picks a pod per connection). */
export async function serviceTarget(
  namespace: string,
  release: string,
): Promise<{ host: string; port: number }> {
  // The chart names its objects after a release whose name contains "taskplans" as the release.
  const host = await kubectl([
    "get",
    "service",
    "-n",
    namespace,
    release,
    "-o",
    "jsonpath={.spec.clusterIP}",
  ]);
  return { host, port: 50051 };
}

export { CHART };

/** Tags an image already in the node's containerd under another name (an image tag change). */
export function tagImage(from: string, to: string): void {
  const out = spawnSync(
    "ctr",
    [
      "--address",
      join(KUBE_RUN, "containerd", "containerd.sock"),
      "-n",
      "k8s.io",
      "images",
      "tag",
      "--force",
      from,
      to,
    ],
    { encoding: "utf8" },
  );
  if (out.status !== 0) throw new Error(`ctr images tag failed: ${out.stderr}`);
}

/** Names of the Ready, not terminating pods matching `selector`. */
export async function readyPods(namespace: string, selector: string): Promise<string[]> {
  return (await podsOf(namespace, selector))
    .filter(isReady)
    .map((p) => p.metadata.name)
    .sort();
}

/** Waits until exactly `count` pods matching `selector` exist and are Ready (none terminating). */
export async function waitForReadyPods(
  namespace: string,
  selector: string,
  count: number,
  limitMs = 180_000,
): Promise<void> {
  await waitFor(`${count} Ready pods (${selector})`, limitMs, async () => {
    const pods = await podsOf(namespace, selector);
    return pods.length === count && pods.every(isReady);
  });
}
