import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../test/harness/free-port";
import { checkHealth, healthClient } from "../test/harness/grpc-clients";
import { stopProcess } from "../test/harness/processes";
import { tracked } from "../test/harness/started-processes";

/** One server process the soak started: `node <main>` from the repository root, as `npm start` runs it. */
export interface ServerProcess {
  readonly name: string;
  readonly port: number;
  readonly metricsPort: number;
  readonly pid: number;
  readonly logFile: string;
  /** Why the process is gone ("exited with 1"), or null while it runs. */
  exitReason(): string | null;
  /** SIGTERM (drain), SIGKILL after 15 s; waits until it is gone. Only this process. */
  stop(): Promise<void>;
}

/**
 * Starts `node <main>` with the inherited environment plus `env`, on a free gRPC port and a free
 * /metrics port (PLAN_METRICS_ADDRESS), and waits for grpc.health.v1 SERVING.
 */
export async function startServer(options: {
  name: string;
  main: string;
  cwd: string;
  env: Record<string, string>;
  logDir: string;
}): Promise<ServerProcess> {
  if (!existsSync(options.main)) {
    throw new Error(`${options.main} is missing: run 'npm run build' first`);
  }
  const port = await freePort();
  const metricsPort = await freePort();
  const logFile = join(options.logDir, `${options.name}.log`);
  // Recorded like every harness-started server, so a test run names it if it were ever left behind.
  const child: ChildProcess = tracked(
    spawn(process.execPath, [options.main], {
      cwd: options.cwd,
      env: {
        ...process.env,
        ...options.env,
        PLAN_GRPC_ADDRESS: `127.0.0.1:${port}`,
        PLAN_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      },
      stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
    }),
    `${options.name} (soak server) on port ${port}`,
  );
  const exitReason = () =>
    child.exitCode !== null
      ? `exited with ${child.exitCode}`
      : child.signalCode !== null
        ? `killed by ${child.signalCode}`
        : null;
  const server: ServerProcess = {
    name: options.name,
    port,
    metricsPort,
    pid: child.pid ?? -1,
    logFile,
    exitReason,
    stop: () => stopProcess(child, 15_000),
  };
  const health = healthClient(port);
  try {
    // waitFor treats a failed probe as "not yet", so a process that exited is checked here.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const gone = exitReason();
      if (gone) throw new Error(`${options.name} ${gone}`);
      if (Date.now() > deadline) throw new Error(`${options.name} not serving within 60 s`);
      if ((await checkHealth(health).catch(() => "")) === "SERVING") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await server.stop();
    throw new Error(`${(error as Error).message}; log: ${tail(logFile)}`, { cause: error });
  } finally {
    health.close();
  }
  return server;
}

/** The end of a log file, for error messages. */
export function tail(file: string, chars = 1500): string {
  try {
    return readFileSync(file, "utf8").slice(-chars).trim() || "(empty)";
  } catch {
    return "(no log)";
  }
}
