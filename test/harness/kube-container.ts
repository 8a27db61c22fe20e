import { type ChildProcess, spawn } from "node:child_process";
import { openSync } from "node:fs";
import { constants } from "node:os";
import { checkHealth, healthClient } from "./grpc-clients";
import type { Pod } from "./pod-network";
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
  readonly startupProbe?: GrpcProbe;
  readonly readinessProbe?: GrpcProbe;
  readonly livenessProbe?: GrpcProbe;
}

/** A rendered gRPC probe. */
export interface GrpcProbe {
  readonly grpc: { readonly port: number; readonly service?: string };
  readonly periodSeconds?: number;
  readonly failureThreshold?: number;
  readonly timeoutSeconds?: number;
}

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
  const source = (kind: "ConfigMap" | "Secret", name: string): Record<string, string> | undefined => {
    const rendered = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (rendered?.stringData) return rendered.stringData;
    if (rendered?.data) {
      if (kind === "ConfigMap") return rendered.data;
      return Object.fromEntries(
        Object.entries(rendered.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
      );
    }
    return kind === "Secret" ? secrets[name] : undefined;
  };
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
}

/**
 * Starts the container the way a container runtime would, minus the image: in the pod's network
 * namespace, as the image's USER, with the WORKDIR as working directory, and only the resolved
 * environment plus PATH and HOSTNAME.
 */
export function startContainer(
  pod: Pod,
  tree: RuntimeTree,
  container: ContainerSpec,
  env: Record<string, string>,
  logFile: string,
): RunningContainer {
  const argv = containerArgv(container, tree);
  const out = openSync(logFile, "a");
  const child = spawn(
    pod.exec[0] ?? "ip",
    [
      ...pod.exec.slice(1),
      "setpriv",
      `--reuid=${tree.uid}`,
      `--regid=${tree.gid}`,
      "--clear-groups",
      "--",
      ...argv,
    ],
    {
      cwd: tree.root,
      env: { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOSTNAME: pod.name, ...env },
      stdio: ["ignore", out, out],
    },
  );
  const exit = new Promise<number>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0))),
  );
  return { child, logFile, exited: () => exit };
}

/** One run of a rendered gRPC probe against the pod, as the kubelet does (timeout 1 s by default). */
export async function probeOnce(pod: Pod, probe: GrpcProbe): Promise<boolean> {
  const client = healthClient(probe.grpc.port, pod.address);
  try {
    const timeout = (probe.timeoutSeconds ?? 1) * 1000;
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
export async function probeUntilSuccess(pod: Pod, probe: GrpcProbe): Promise<boolean> {
  const period = (probe.periodSeconds ?? 10) * 1000;
  for (let failures = 0; failures < (probe.failureThreshold ?? 3); failures++) {
    if (await probeOnce(pod, probe)) return true;
    await new Promise((resolve) => setTimeout(resolve, period));
  }
  return false;
}
