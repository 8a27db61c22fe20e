import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CHART, helm } from "../harness/helm";

/**
 * The test cluster scripts/kube/up.sh started (KUBECONFIG points at it): kubectl and helm against
 * it, and the waits the scenarios share. Every call throws with the tool's stderr when it fails.
 */

const KUBE_RUN = process.env.KUBE_RUN ?? "/run/taskplans-kube";

function run(tool: "kubectl" | "helm", args: readonly string[], input?: string): string {
  const out =
    tool === "helm"
      ? helm(...args)
      : spawnSync("kubectl", args, { encoding: "utf8", input, maxBuffer: 64 << 20 });
  if (out.status !== 0)
    throw new Error(
      `${tool} ${args.join(" ")} failed (${out.status}): ${out.stderr}${tool === "helm" ? recentEvents(args) : ""}`,
    );
  return out.stdout;
}

/** The namespace's latest events and failed pods' logs, to say why a helm command failed. */
function recentEvents(args: readonly string[]): string {
  const namespace = args[args.indexOf("-n") + 1];
  if (!namespace) return "";
  const events = spawnSync("kubectl", ["get", "events", "-n", namespace, "--sort-by=.lastTimestamp"], {
    encoding: "utf8",
  });
  const logs = spawnSync(
    "kubectl",
    ["logs", "-n", namespace, "-l", "app.kubernetes.io/component=migrate", "--tail=5"],
    {
      encoding: "utf8",
    },
  );
  return `\nlatest events:\n${events.stdout.split("\n").slice(-15).join("\n")}\nmigration Job log:\n${logs.stdout}`;
}

export const kubectl = (args: readonly string[], input?: string): string => run("kubectl", args, input);
export const helmIn = (args: readonly string[]): string => run("helm", args);

export function kubectlJson<T>(args: readonly string[]): T {
  return JSON.parse(kubectl([...args, "-o", "json"])) as T;
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

export function podsOf(namespace: string, selector: string): PodInfo[] {
  return kubectlJson<{ items: PodInfo[] }>(["get", "pods", "-n", namespace, "-l", selector]).items;
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
  kubectl(["create", "namespace", namespace]);
  // The database's host directory of an earlier run holds another password.
  rmSync(join(KUBE_RUN, "volumes", namespace), { recursive: true, force: true });
  const password = randomBytes(12).toString("hex");
  const manifest = readFileSync(join(__dirname, "dependencies.yaml"), "utf8")
    .replaceAll("${DB_PASSWORD}", password)
    .replaceAll("${DATA_DIR}", join(KUBE_RUN, "volumes", namespace));
  kubectl(["apply", "-n", namespace, "-f", "-"], manifest);
  kubectl(["rollout", "status", "-n", namespace, "deployment/mariadb", "--timeout=180s"]);
  kubectl(["rollout", "status", "-n", namespace, "statefulset/redis", "--timeout=120s"]);
  const ip = kubectl(["get", "service", "-n", namespace, "mariadb", "-o", "jsonpath={.spec.clusterIP}"]);
  return {
    namespace,
    databaseUrl: `mysql://taskplans:${password}@${ip}:3306/taskplans`,
    secret: "taskplans-backends",
  };
}

export function deleteNamespace(namespace: string): void {
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

/** The release's plain Service as host:port from the machine (kube-proxy picks a pod per connection). */
export function serviceTarget(namespace: string, release: string): { host: string; port: number } {
  // The chart names its objects after a release whose name contains "taskplans" as the release.
  const host = kubectl(["get", "service", "-n", namespace, release, "-o", "jsonpath={.spec.clusterIP}"]);
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
export function readyPods(namespace: string, selector: string): string[] {
  return podsOf(namespace, selector)
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
  await waitFor(`${count} Ready pods (${selector})`, limitMs, () => {
    const pods = podsOf(namespace, selector);
    return pods.length === count && pods.every(isReady);
  });
}
