import { readFileSync } from "node:fs";
import { type Replica, startReplica } from "../../test/harness/servers/replica";

/** One server process the soak started: `node <main>` from the repository root, as `npm start` runs it. */
export interface ServerProcess extends Replica {
  readonly name: string;
  readonly metricsPort: number;
}

/**
 * Starts `node <main>` (test/harness/servers/replica.ts: a free gRPC port, a free /metrics port, recorded
 * by PID, stopped if it does not come up) with the inherited environment plus `env`, and waits up to
 * 60 s for grpc.health.v1 SERVING. A failed start says what the server's log ends with.
 */
export async function startServer(options: {
  name: string;
  main: string;
  env: Record<string, string>;
  logDir: string;
}): Promise<ServerProcess> {
  const { name, main, env, logDir } = options;
  try {
    const replica = await startReplica(env, logDir, null, {
      main,
      name,
      metrics: true,
      servingWithinMs: 60_000,
    });
    return Object.assign(replica, { name, metricsPort: replica.metricsPort ?? -1 });
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}; log: ${tail(`${logDir}/${name}.log`)}`, {
      cause: error,
    });
  }
}

/** The end of a log file, for error messages. */
export function tail(file: string, chars = 1500): string {
  try {
    return readFileSync(file, "utf8").slice(-chars).trim() || "(empty)";
  } catch {
    return "(no log)";
  }
}
