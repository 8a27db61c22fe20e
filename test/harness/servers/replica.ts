import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { credentials } from "@grpc/grpc-js";
import { join } from "node:path";
import { freePort } from "./free-port";
import { checkHealth, healthClient } from "../calls/grpc-clients";
import type { Pod } from "../network/pod-network";
import { stopProcess, waitFor } from "./processes";
import { repoRoot } from "./repo-root";
import { tracked } from "./started-processes";

/** A service replica running as its own OS process (the built server, dist/src/bin/main.js). */
export interface Replica {
  /** The address clients reach it on (127.0.0.1, or its pod's address). */
  readonly host: string;
  readonly port: number;
  /** Its HTTP listener (PLAN_HTTP_ADDRESS: Connect, gRPC-Web, the console). */
  readonly httpPort: number;
  readonly pid: number;
  readonly logFile: string;
  /** Its /metrics port when started with `metrics`, else null (it listens on a port of its own choosing). */
  readonly metricsPort: number | null;
  /** Why the process is gone ("exited with 1", "killed by SIGKILL"), or null while it runs. */
  exitReason(): string | null;
  pause(): void;
  resume(): void;
  /** kill -9, then wait for the process to be gone. */
  kill(): Promise<void>;
  /** Starts the process again on the same port and waits until it serves. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const MAIN = join(repoRoot(), "dist", "src", "bin", "main.js");

/** How a replica is started besides its environment. */
export interface ReplicaOptions {
  /** How long it may take to serve (default 30 s). */
  readonly servingWithinMs?: number;
  /** The entry point (default this checkout's dist/src/bin/main.js; another build's, to compare). */
  readonly main?: string;
  /** Names its log file and its record (default `replica-<port>`). */
  readonly name?: string;
  /** Serve /metrics on a free port of its own, reported as `metricsPort`. */
  readonly metrics?: boolean;
  /** Options for node itself, before the entry point (for example `--cpu-prof`, which NODE_OPTIONS refuses). */
  readonly nodeArgs?: readonly string[];
  /** Its PLAN_LOG_LEVEL (default warn). */
  readonly logLevel?: string;
  /** It serves TLS: how the harness's health check reaches it (the CA, a client certificate for mTLS). */
  readonly tls?: ReplicaTls;
}

/** What a client needs to reach a TLS replica. */
export interface ReplicaTls {
  readonly ca: Buffer;
  /** The name its certificate carries, when not 127.0.0.1. */
  readonly serverName?: string;
  readonly client?: { readonly certFile: string; readonly keyFile: string };
}

/**
 * Starts a replica with `env` on a free port, from the repository root as `npm start` runs it, and
 * waits for grpc.health.v1 SERVING. With `pod`, it runs in that pod's network namespace and listens
 * on the pod's address.
 */
export async function startReplica(
  env: Record<string, string>,
  logDir: string,
  pod: Pod | null = null,
  options: ReplicaOptions = {},
): Promise<Replica> {
  const within = options.servingWithinMs ?? 30_000;
  const main = options.main ?? MAIN;
  if (!existsSync(main)) throw new Error(`${main} is missing: run 'npm run build' first (npm test does)`);
  const port = await freePort();
  const httpPort = await freePort();
  const metricsPort = options.metrics ? await freePort() : null;
  const host = pod?.address ?? "127.0.0.1";
  const name = options.name ?? `replica-${port}`;
  const logFile = join(logDir, `${name}.log`);
  const [command, ...prefix] = pod ? [...pod.exec, process.execPath] : [process.execPath];
  const launch = () =>
    tracked(
      spawn(command ?? process.execPath, [...prefix, ...(options.nodeArgs ?? []), main], {
        cwd: repoRoot(),
        env: {
          ...process.env,
          PLAN_RATE_LIMIT_WRITES: "0", // load and fault workloads write from one address
          ...env,
          PLAN_GRPC_ADDRESS: `${pod ? "0.0.0.0" : "127.0.0.1"}:${port}`,
          PLAN_HTTP_ADDRESS: `${pod ? "0.0.0.0" : "127.0.0.1"}:${httpPort}`,
          PLAN_LOG_LEVEL: options.logLevel ?? "warn",
          PLAN_METRICS_ADDRESS: `127.0.0.1:${metricsPort ?? 0}`,
        },
        stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
      }),
      `${name} on port ${port}`,
    );
  let child: ChildProcess = launch();
  await servingOrStopped(host, port, child, within, options.tls);
  return {
    host,
    port,
    httpPort,
    logFile,
    metricsPort,
    get pid() {
      return child.pid ?? -1;
    },
    exitReason: () =>
      child.exitCode !== null
        ? `exited with ${child.exitCode}`
        : child.signalCode !== null
          ? `killed by ${child.signalCode}`
          : null,
    pause: () => void child.kill("SIGSTOP"),
    resume: () => void child.kill("SIGCONT"),
    kill: () => stopProcess(child, 0),
    async restart() {
      child = launch();
      await servingOrStopped(host, port, child, within, options.tls);
    },
    stop: () => stopProcess(child, 15_000),
  };
}

// A replica that does not come up is stopped before the error goes on: nothing a failed start
// spawned outlives it.
async function servingOrStopped(
  host: string,
  port: number,
  child: ChildProcess,
  withinMs: number,
  tls: ReplicaTls | undefined,
): Promise<void> {
  try {
    await untilServing(host, port, child, withinMs, tls);
  } catch (error) {
    await stopProcess(child, 0);
    throw error;
  }
}

async function untilServing(
  host: string,
  port: number,
  child: ChildProcess,
  withinMs: number,
  tls: ReplicaTls | undefined,
): Promise<void> {
  const health = tls
    ? healthClient(
        port,
        host,
        credentials.createSsl(
          tls.ca,
          tls.client ? readFileSync(tls.client.keyFile) : null,
          tls.client ? readFileSync(tls.client.certFile) : null,
        ),
        tls.serverName ? { "grpc.ssl_target_name_override": tls.serverName } : {},
      )
    : healthClient(port, host);
  try {
    await waitFor(
      `replica on ${port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`replica on ${port} exited with ${child.exitCode}`);
        return (await checkHealth(health)) === "SERVING";
      },
      withinMs,
    );
  } finally {
    health.close();
  }
}
