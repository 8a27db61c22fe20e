import { spawn } from "node:child_process";
import { connect } from "../harness/calls/rpc";
import { WriteMode } from "@taskplans/contract";
import {
  type Backends,
  deleteNamespace,
  helmRelease,
  helmIn,
  isReady,
  kubectl,
  migrationJobEvents,
  podsOf,
  readyPods,
  secondsSince,
  serviceTarget,
  startBackends,
  tagImage,
  waitFor,
  waitForReadyPods,
} from "./cluster";
import { underLoad } from "./load";

// The chart as an operator runs it: installed with 3 replicas on the test cluster, the backends as
// workloads beside it. The scenarios run in order on one release.
const NAMESPACE = "taskplans-release";
const RELEASE = "taskplans";
const SELECTOR = `app.kubernetes.io/name=taskplans,app.kubernetes.io/instance=${RELEASE}`;

let backends: Backends;

beforeAll(async () => {
  const start = Date.now();
  backends = await startBackends(NAMESPACE);
  console.log(`[kube] backends (MariaDB, 3 Redis) ready in ${secondsSince(start)} s`);
}, 300_000);

afterAll(() => deleteNamespace(NAMESPACE));

it("1. install: the migration Job runs as the pre-install hook, 3 replicas go Ready through their gRPC probes, helm test passes, every pod runs with the chart's securityContext, and a client outside the cluster writes and reads through the Service", async () => {
  const installSeconds = await helmRelease("install", { namespace: NAMESPACE, release: RELEASE }, backends);

  expect(await migrationJobEvents(NAMESPACE, RELEASE)).toContain("Completed");

  const pods = await podsOf(NAMESPACE, SELECTOR);
  expect(pods.filter(isReady)).toHaveLength(3);
  for (const pod of pods) {
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(pod.spec.containers[0]?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    // What the kernel applied, read inside the running container.
    const inside = await kubectl([
      "exec",
      "-n",
      NAMESPACE,
      pod.metadata.name,
      "--",
      "sh",
      "-c",
      "id -u; grep -E '^(Seccomp|NoNewPrivs|CapEff):' /proc/self/status; touch /app/x 2>&1 || true",
    ]);
    expect(inside).toMatch(/^10001\n/);
    expect(inside).toMatch(/Seccomp:\s+2/); // a seccomp filter is installed
    expect(inside).toMatch(/NoNewPrivs:\s+1/);
    expect(inside).toMatch(/CapEff:\s+0+\n/);
    expect(inside).toMatch(/Read-only file system/);
  }
  const kinds = await kubectl(["get", "pdb,hpa,networkpolicy,serviceaccount", "-n", NAMESPACE, "-o", "name"]);
  expect(kinds).toContain(`poddisruptionbudget.policy/${RELEASE}`);
  expect(kinds).toContain(`horizontalpodautoscaler.autoscaling/${RELEASE}`);

  const start = Date.now();
  const testOutput = await helmIn(["test", RELEASE, "-n", NAMESPACE, "--logs"]);
  const testSeconds = secondsSince(start);
  expect(testOutput).toMatch(/Phase:\s+Succeeded/);

  // From the machine, outside the cluster: through the Service's cluster IP (kube-proxy).
  const target = await serviceTarget(NAMESPACE, RELEASE);
  const client = connect(target.port, undefined, target.host);
  try {
    const taskId = `install-${Date.now()}`;
    await client.tasks.createTask({ taskId, workspaceId: "ws" });
    await client.plans.createPlan({ taskId, content: "# Plan\n\n- installed\n" });
    await client.plans.updatePlan({
      taskId,
      content: "- appended from outside",
      mode: WriteMode.WRITE_MODE_APPEND,
    });
    const { plan } = await client.plans.getPlan({ taskId });
    expect(plan?.content).toBe("# Plan\n\n- installed\n\n- appended from outside");
    expect(plan?.version).toBe(2);
  } finally {
    client.close();
  }
  console.log(
    `[kube] install: helm install --wait ${installSeconds} s (migration Job, 3 replicas Ready), ` +
      `helm test ${testSeconds} s; securityContext applied in ${pods.length} pods`,
  );
});

/** The load of `underLoad` through the release's Service while `action` runs. */
const onRelease = async (name: string, action: () => Promise<string>) =>
  underLoad(name, await serviceTarget(NAMESPACE, RELEASE), backends.databaseUrl, action);

/** helm upgrade of the release to `extra` values over the test's own, waiting for the rollout. */
const upgrade = (extra: readonly string[]): Promise<string> =>
  helmRelease("upgrade", { namespace: NAMESPACE, release: RELEASE }, backends, extra);

const imagesOf = async (names: readonly string[]) =>
  (await podsOf(NAMESPACE, SELECTOR))
    .filter((p) => names.includes(p.metadata.name))
    .map((p) => p.spec.containers[0]?.image);

it("2. rolling upgrade under load: a config change, then an image tag change, roll every replica; no acknowledged write is lost or duplicated and every watcher sees every committed version once, in order", async () => {
  tagImage("localhost/taskplans:test", "localhost/taskplans:test-b");
  const before = await readyPods(NAMESPACE, SELECTOR);
  let afterConfig: string[] = [];
  let afterImage: string[] = [];
  const result = await onRelease("rolling upgrade", async () => {
    const configSeconds = await upgrade(["config.PLAN_SLOW_CALL_MS=2000"]);
    afterConfig = await readyPods(NAMESPACE, SELECTOR);
    const imageSeconds = await upgrade(["config.PLAN_SLOW_CALL_MS=2000", "image.tag=test-b"]);
    afterImage = await readyPods(NAMESPACE, SELECTOR);
    return `config change rolled 3 replicas in ${configSeconds} s, image tag change in ${imageSeconds} s`;
  });
  expect(afterConfig).toHaveLength(3);
  expect(afterConfig.filter((name) => before.includes(name))).toEqual([]);
  // Only the workload's own conflicts (a replace or edit of a stale read): no call met a replica
  // that was going away (the chart's preStop sleep, then the drain).
  expect(Object.keys(result.errorsDuring).filter((reason) => reason !== "VERSION_MISMATCH")).toEqual([]);
  expect(afterImage).toHaveLength(3);
  expect(afterImage.filter((name) => afterConfig.includes(name))).toEqual([]);
  expect(await imagesOf(afterImage)).toEqual([
    "localhost/taskplans:test-b",
    "localhost/taskplans:test-b",
    "localhost/taskplans:test-b",
  ]);
  expect(result.ok).toBeGreaterThan(100);
});

it("3. helm rollback under load to the installed revision: every replica rolls back to the first image and configuration, with the same checks", async () => {
  const before = await readyPods(NAMESPACE, SELECTOR);
  let after: string[] = [];
  const result = await onRelease("rollback", async () => {
    const start = Date.now();
    await helmIn(["rollback", RELEASE, "1", "-n", NAMESPACE, "--wait", "--timeout", "5m"]);
    after = await readyPods(NAMESPACE, SELECTOR);
    return `helm rollback to revision 1 rolled 3 replicas in ${secondsSince(start)} s`;
  });
  expect(Object.keys(result.errorsDuring).filter((reason) => reason !== "VERSION_MISMATCH")).toEqual([]);
  expect(after).toHaveLength(3);
  expect(after.filter((name) => before.includes(name))).toEqual([]);
  expect(await imagesOf(after)).toEqual([
    "localhost/taskplans:test",
    "localhost/taskplans:test",
    "localhost/taskplans:test",
  ]);
  const slowCall = await kubectl([
    "get",
    "configmap",
    "-n",
    NAMESPACE,
    RELEASE,
    "-o",
    "jsonpath={.data.PLAN_SLOW_CALL_MS}",
  ]);
  expect(slowCall).toBe("1000");
  expect(result.ok).toBeGreaterThan(100);
});

/** The PID of the service's Node.js process inside a pod's container (tini is PID 1). */
async function servicePid(pod: string): Promise<string> {
  const script =
    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = node ] && echo ${p#/proc/}; done';
  return (await kubectl(["exec", "-n", NAMESPACE, pod, "--", "sh", "-c", script])).trim();
}

const restartsOf = async (pod: string) =>
  (await podsOf(NAMESPACE, SELECTOR)).find((p) => p.metadata.name === pod)?.status.containerStatuses?.[0]
    ?.restartCount ?? -1;

describe("4. disruption under load, with the same checks", () => {
  it("kubectl delete pod of a replica mid-load (every replica holds leases: three hot tasks, six writers)", async () => {
    const [victim] = await readyPods(NAMESPACE, SELECTOR);
    const result = await onRelease("delete pod", async () => {
      const start = Date.now();
      await kubectl(["delete", "pod", "-n", NAMESPACE, victim as string, "--wait=false"]);
      await waitFor("the replacement replica", 180_000, async () => {
        const ready = await readyPods(NAMESPACE, SELECTOR);
        return ready.length === 3 && !ready.includes(victim as string);
      });
      return `deleted ${victim}; 3 replicas Ready again after ${secondsSince(start)} s`;
    });
    expect(result.ok).toBeGreaterThan(100);
  });

  it("kill -9 of the service inside a replica's container: the kubelet restarts it", async () => {
    const [victim] = (await readyPods(NAMESPACE, SELECTOR)) as [string];
    const restarts = await restartsOf(victim);
    const result = await onRelease("kill -9 in the container", async () => {
      const start = Date.now();
      const pid = await servicePid(victim);
      expect(pid).toMatch(/^\d+$/);
      // The image has no kill binary: the shell's builtin.
      await kubectl(["exec", "-n", NAMESPACE, victim, "--", "sh", "-c", `kill -9 ${pid}`]);
      await waitFor(
        "the restarted container",
        180_000,
        async () =>
          (await restartsOf(victim)) > restarts && (await readyPods(NAMESPACE, SELECTOR)).includes(victim),
      );
      return `SIGKILL to PID ${pid} in ${victim}; restarted and Ready after ${secondsSince(start)} s`;
    });
    expect(await restartsOf(victim)).toBe(restarts + 1);
    expect(result.ok).toBeGreaterThan(100);
  });

  it("a Redis pod deleted (2 of 3 nodes remain, then its replacement joins under the same DNS name)", async () => {
    const result = await onRelease("Redis pod deleted", async () => {
      const start = Date.now();
      await kubectl(["delete", "pod", "-n", NAMESPACE, "redis-1", "--wait=true"]);
      await kubectl(["rollout", "status", "-n", NAMESPACE, "statefulset/redis", "--timeout=120s"]);
      return `deleted redis-1; back after ${secondsSince(start)} s`;
    });
    expect(result.ok).toBeGreaterThan(100);
  });

  it("the MariaDB pod restarted (its data on the node survives)", async () => {
    const result = await onRelease("MariaDB pod restarted", async () => {
      const start = Date.now();
      await kubectl(["delete", "pod", "-n", NAMESPACE, "-l", "app=mariadb", "--wait=true"]);
      await kubectl(["rollout", "status", "-n", NAMESPACE, "deployment/mariadb", "--timeout=180s"]);
      await waitFor(
        "3 Ready replicas",
        120_000,
        async () => (await readyPods(NAMESPACE, SELECTOR)).length === 3,
      );
      return `MariaDB pod deleted and recreated; Ready after ${secondsSince(start)} s`;
    });
    expect(result.ok).toBeGreaterThan(100);
  });
});

it("5. scale 3 -> 5 -> 2 under load (the HPA's bounds): new replicas serve once Ready, removed ones drain on SIGTERM", async () => {
  const logs: string[] = [];
  // Every pod there is, Ready or not (a replica can be briefly unready after the MariaDB restart).
  const before = (await podsOf(NAMESPACE, SELECTOR)).map((pod) => pod.metadata.name);
  let served = 0;
  const result = await onRelease("scale 3 -> 5 -> 2", async () => {
    let start = Date.now();
    await upgrade(["autoscaling.minReplicas=5", "autoscaling.maxReplicas=5"]);
    await waitForReadyPods(NAMESPACE, SELECTOR, 5);
    const up = secondsSince(start);
    const five = await readyPods(NAMESPACE, SELECTOR);
    // Each new replica answers once Ready: a call straight to its pod address.
    for (const pod of await podsOf(NAMESPACE, SELECTOR)) {
      if (before.includes(pod.metadata.name)) continue;
      const direct = connect(50051, undefined, pod.status.podIP);
      try {
        await direct.tasks.createTask({ taskId: `scaled-${pod.metadata.name}`, workspaceId: "ws" });
        served += 1;
      } finally {
        direct.close();
      }
    }
    // Follow every replica's log, so the removed ones' last lines (the drain) are kept.
    const followers = five.map((pod) => followLog(pod, logs));
    start = Date.now();
    await upgrade(["autoscaling.minReplicas=2", "autoscaling.maxReplicas=2"]);
    await waitForReadyPods(NAMESPACE, SELECTOR, 2);
    const down = secondsSince(start);
    const two = await readyPods(NAMESPACE, SELECTOR);
    await Promise.all(followers.filter((f) => !two.includes(f.pod)).map((f) => f.ended));
    for (const f of followers) f.stop();
    return `3 -> 5 Ready in ${up} s, 5 -> 2 in ${down} s`;
  });
  // Each removed replica logged the signal, then its last line once the drain had finished
  // (kubectl's --timestamps: when the kubelet read each line).
  const at = (line: string) => Date.parse(line.split(" ")[1] ?? "");
  const signalled = logs.filter((line) => line.includes("SIGTERM received, draining"));
  const stopped = logs.filter((line) => /"msg":"stopped"/.test(line));
  const drains = stopped.map((line) => {
    const pod = line.split(":")[0];
    const signal = signalled.find((s) => s.startsWith(`${pod}:`)) ?? "";
    return `${at(line) - at(signal)} ms`;
  });
  console.log(
    `[kube] scale: ${served} new replicas answered a call to their own address once Ready; ` +
      `${signalled.length} removed replicas drained, SIGTERM to stopped in ${drains.join(", ")}`,
  );
  expect(Object.keys(result.errorsDuring).filter((reason) => reason !== "VERSION_MISMATCH")).toEqual([]);
  expect(served).toBe(2);
  expect(signalled).toHaveLength(3);
  expect(stopped).toHaveLength(3);
  expect(result.ok).toBeGreaterThan(100);
  await upgrade([]);
  await waitForReadyPods(NAMESPACE, SELECTOR, 3);
});

/** `kubectl logs -f` of a pod into `lines` until the pod ends (or stop()). */
function followLog(pod: string, lines: string[]): { pod: string; ended: Promise<void>; stop(): void } {
  const child = spawn("kubectl", ["logs", "-f", "--timestamps", "-n", NAMESPACE, pod], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let buffered = "";
  const take = (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const line of parts) lines.push(`${pod}: ${line}`);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const ended = new Promise<void>((resolve) => child.on("close", () => resolve()));
  return { pod, ended, stop: () => child.kill("SIGTERM") };
}
