import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { checkHealth, healthClient } from "../calls/grpc-clients";
import type { Pod } from "../network/pod-network";
import type { RuntimeTree } from "./runtime-tree";

/** The parts of a rendered Kubernetes object these helpers read. */
export interface KubeObject {
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
  readonly data?: Record<string, string>;
  readonly stringData?: Record<string, string>;
}

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    readonly configMapKeyRef?: { name: string; key: string; optional?: boolean };
    readonly secretKeyRef?: { name: string; key: string; optional?: boolean };
  };
}

/** A rendered container spec (the fields a kubelet needs to start it and probe it). */
export interface ContainerSpec {
  readonly name: string;
  readonly command?: string[];
  readonly args?: string[];
  readonly env?: EnvVar[];
  readonly envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  readonly startupProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly livenessProbe?: Probe;
  readonly volumeMounts?: {
    readonly name: string;
    readonly mountPath: string;
    readonly readOnly?: boolean;
  }[];
}

/** A rendered probe: gRPC (the kubelet dials the pod) or exec (a command run inside the container). */
export interface Probe {
  readonly grpc?: { readonly port: number; readonly service?: string };
  readonly exec?: { readonly command: readonly string[] };
  readonly periodSeconds?: number;
  readonly failureThreshold?: number;
  readonly timeoutSeconds?: number;
}

/** A rendered pod volume (the kinds the chart uses). */
export interface PodVolume {
  readonly name: string;
  readonly emptyDir?: object;
  readonly secret?: {
    readonly secretName: string;
    readonly defaultMode?: number;
    readonly items?: readonly { key: string; path: string }[];
  };
}

/** The files of a container's secret volumes: mount path -> file name -> content. */
export type SecretMounts = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** Secrets that exist in the namespace without the chart rendering them (`existingSecrets`). */
export type ExternalSecrets = Readonly<Record<string, Readonly<Record<string, string>>>>;

/**
 * The container's environment as the kubelet builds it: the image's ENV, then `envFrom`, then `env`
 * (ConfigMap and Secret references resolved from the rendered objects or the external secrets,
 * `$(VAR)` expanded). A missing non-optional reference throws, as the pod would not start.
 */
export function resolveEnv(
  container: ContainerSpec,
  objects: readonly KubeObject[],
  secrets: ExternalSecrets,
  imageEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  const source = (kind: "ConfigMap" | "Secret", name: string) => sourceOf(objects, secrets, kind, name);
  const lookup = (kind: "ConfigMap" | "Secret", ref: { name: string; key: string; optional?: boolean }) => {
    const value = source(kind, ref.name)?.[ref.key];
    if (value === undefined && !ref.optional) {
      throw new Error(
        `${container.name}: ${kind} ${ref.name} has no key ${ref.key} (CreateContainerConfigError)`,
      );
    }
    return value;
  };
  const env: Record<string, string> = { ...imageEnv };
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (ref) Object.assign(env, source(from.configMapRef ? "ConfigMap" : "Secret", ref.name) ?? {});
  }
  for (const variable of container.env ?? []) {
    const { configMapKeyRef, secretKeyRef } = variable.valueFrom ?? {};
    const value =
      variable.value !== undefined
        ? variable.value.replace(/\$\((\w+)\)/g, (whole, name: string) => env[name] ?? whole)
        : configMapKeyRef
          ? lookup("ConfigMap", configMapKeyRef)
          : secretKeyRef
            ? lookup("Secret", secretKeyRef)
            : "";
    if (value !== undefined) env[variable.name] = value;
  }
  return env;
}

// A ConfigMap's or Secret's data, from the rendered objects or the secrets that exist beside them.
function sourceOf(
  objects: readonly KubeObject[],
  secrets: ExternalSecrets,
  kind: "ConfigMap" | "Secret",
  name: string,
): Record<string, string> | undefined {
  const rendered = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (rendered?.stringData) return rendered.stringData;
  if (rendered?.data) {
    if (kind === "ConfigMap") return rendered.data;
    return Object.fromEntries(
      Object.entries(rendered.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
    );
  }
  return kind === "Secret" ? secrets[name] : undefined;
}

/**
 * The container's secret volumes as the kubelet projects them: each mounted Secret's keys (or its
 * `items`) as files. A missing Secret or key throws, as the pod would not start.
 */
export function resolveSecretMounts(
  container: ContainerSpec,
  volumes: readonly PodVolume[],
  objects: readonly KubeObject[],
  secrets: ExternalSecrets,
): SecretMounts {
  const mounts: Record<string, Record<string, string>> = {};
  for (const mount of container.volumeMounts ?? []) {
    const secret = volumes.find((volume) => volume.name === mount.name)?.secret;
    if (!secret) continue;
    const data = sourceOf(objects, secrets, "Secret", secret.secretName);
    if (!data)
      throw new Error(`${container.name}: secret ${secret.secretName} not found (ContainerCreating)`);
    const items = secret.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    mounts[mount.mountPath] = Object.fromEntries(
      items.map(({ key, path }) => {
        const value = data[key];
        if (value === undefined)
          throw new Error(`${container.name}: secret ${secret.secretName} has no key ${key}`);
        return [path, value];
      }),
    );
  }
  return mounts;
}

/** Kubernetes' rule: `command` replaces the image's ENTRYPOINT, `args` its CMD. */
export function containerArgv(container: ContainerSpec, tree: RuntimeTree): string[] {
  if (container.command) return [...container.command, ...(container.args ?? [])];
  return [...tree.entrypoint, ...(container.args ?? tree.cmd)];
}

/** A container process started in its pod. */
export interface RunningContainer {
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code (128 + the signal's number when a signal ended it). */
  exited(): Promise<number>;
  /**
   * Runs a command inside the container, as a kubelet exec probe does: in its network and mount
   * namespaces, as the image's user, with the container's environment. Resolves the exit code (null
   * when `timeoutMs` passed first and it was killed).
   */
  exec(argv: readonly string[], timeoutMs: number): Promise<number | null>;
}

// Secret volumes are mounted where the chart mounts them, under /var/run/secrets: a tmpfs over /run
// in the container's own mount namespace, so nothing on the host changes.
const SECRETS_ROOT = /^\/(var\/)?run\/secrets\//;

/**
 * Starts the container the way a container runtime would, minus the image: in the pod's network
 * namespace, as the image's USER, with the WORKDIR as working directory, only the resolved
 * environment plus PATH and HOSTNAME, and its secret volumes' files (written to `scratch`, then
 * copied into the container's private /run).
 */
export function startContainer(
  pod: Pod,
  tree: RuntimeTree,
  container: ContainerSpec,
  env: Record<string, string>,
  logFile: string,
  secretMounts: SecretMounts = {},
): RunningContainer {
  const argv = containerArgv(container, tree);
  const out = openSync(logFile, "a");
  const asUser = ["setpriv", `--reuid=${tree.uid}`, `--regid=${tree.gid}`, "--clear-groups", "--"];
  const mounts = Object.entries(secretMounts);
  let withMounts: string[] = [];
  if (mounts.length > 0) {
    const staged = mkdtempSync(join(dirname(logFile), `${container.name}-secrets-`));
    const steps = ["mount -t tmpfs -o mode=755,size=1m tmpfs /run"];
    mounts.forEach(([mountPath, files], index) => {
      if (!SECRETS_ROOT.test(mountPath))
        throw new Error(`${mountPath}: the harness mounts secrets under /var/run/secrets only`);
      const dir = join(staged, String(index));
      mkdirSync(dir);
      for (const [name, content] of Object.entries(files))
        writeFileSync(join(dir, name), content, { mode: 0o444 });
      steps.push(`mkdir -p '${mountPath}'`, `cp -p '${dir}'/* '${mountPath}'/`);
    });
    withMounts = [
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "--",
      "sh",
      "-ec",
      `${steps.join("; ")}; exec "$@"`,
      "sh",
    ];
  }
  const containerEnv = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOSTNAME: pod.name,
    ...env,
  };
  const child = spawn(pod.exec[0] ?? "ip", [...pod.exec.slice(1), ...withMounts, ...asUser, ...argv], {
    cwd: tree.root,
    env: containerEnv,
    stdio: ["ignore", out, out],
  });
  const exit = new Promise<number>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0))),
  );
  return {
    child,
    logFile,
    exited: () => exit,
    exec(command, timeoutMs) {
      const target = String(child.pid ?? 0);
      const probe = spawn(
        "nsenter",
        ["--target", target, "--mount", "--net", `--wd=${tree.root}`, ...asUser, ...command],
        {
          env: containerEnv,
          stdio: ["ignore", "ignore", "ignore"],
        },
      );
      return new Promise((resolve) => {
        const timer = setTimeout(() => probe.kill("SIGKILL"), timeoutMs);
        probe.once("exit", (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
    },
  };
}

/**
 * One run of a rendered probe, as the kubelet does (timeout 1 s by default): a gRPC health check
 * of the pod, or the exec probe's command inside the container.
 */
export async function probeOnce(
  target: { readonly pod: Pod; readonly container: RunningContainer },
  probe: Probe,
): Promise<boolean> {
  const timeout = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.exec) return (await target.container.exec(probe.exec.command, timeout)) === 0;
  if (!probe.grpc) throw new Error("a probe the harness does not know (neither grpc nor exec)");
  const client = healthClient(probe.grpc.port, target.pod.address);
  try {
    const status = await Promise.race([
      checkHealth(client, probe.grpc.service ?? ""),
      new Promise<string>((resolve) => setTimeout(() => resolve("TIMEOUT"), timeout).unref()),
    ]);
    return status === "SERVING";
  } catch {
    return false;
  } finally {
    client.close();
  }
}

/**
 * Runs a probe every `periodSeconds` until it succeeds; false once it failed `failureThreshold`
 * times in a row (the kubelet would then restart the container, or never mark it ready).
 */
export async function probeUntilSuccess(
  target: { readonly pod: Pod; readonly container: RunningContainer },
  probe: Probe,
): Promise<boolean> {
  const period = (probe.periodSeconds ?? 10) * 1000;
  for (let failures = 0; failures < (probe.failureThreshold ?? 3); failures++) {
    if (await probeOnce(target, probe)) return true;
    await new Promise((resolve) => setTimeout(resolve, period));
  }
  return false;
}
