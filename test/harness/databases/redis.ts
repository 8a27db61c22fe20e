import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "node:net";
import { freePort } from "../servers/free-port";
import { requireBinary, stopProcess, waitFor } from "../servers/processes";
import { tracked } from "../servers/started-processes";

/** A throwaway redis-server started by the tests (no persistence, loopback, free port). */
export interface RedisNode {
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  /** Kills this process (SIGKILL) and waits for it. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: Redis holds only leases). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `count` independent redis-server processes. */
export async function startRedisNodes(count: number, options: { host?: string } = {}): Promise<RedisNode[]> {
  requireBinary("redis-server", "redis-server");
  return Promise.all(Array.from({ length: count }, () => startRedisNode(options.host ?? null)));
}

/** `host`: an extra listen address besides loopback (for pods in network namespaces); URLs use it. */
async function startRedisNode(host: string | null): Promise<RedisNode> {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-redis-"));
  const port = await freePort();
  const launch = () => launchRedis(port, dir, host);
  let child: ChildProcess = launch();
  try {
    await waitUntilPinged(port, child);
  } catch (error) {
    await stopProcess(child, 0); // a node that did not come up is not left behind
    throw error;
  }
  return {
    port,
    url: `redis://${host ?? "127.0.0.1"}:${port}`,
    get pid() {
      return child.pid ?? -1;
    },
    async kill() {
      await stopProcess(child, 0);
    },
    async restart() {
      child = launch();
      await waitUntilPinged(port, child);
    },
    async stop() {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function launchRedis(port: number, dir: string, host: string | null): ChildProcess {
  // Protected mode refuses non-loopback clients of a password-less server; the extra address is a
  // test-only bridge no other machine reaches.
  const reach = host ? ["--bind", "127.0.0.1", host, "--protected-mode", "no"] : ["--bind", "127.0.0.1"];
  return tracked(
    spawn(
      "redis-server",
      [
        "--port",
        String(port),
        ...reach,
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
        "--daemonize",
        "no",
      ],
      { stdio: "ignore" },
    ),
    `redis-server on port ${port}`,
  );
}

function waitUntilPinged(port: number, child: ChildProcess): Promise<void> {
  return waitFor(
    `redis-server on ${port}`,
    () =>
      new Promise<boolean>((resolve, reject) => {
        if (child.exitCode !== null) reject(new Error("redis-server exited"));
        const socket = createConnection({ host: "127.0.0.1", port }, () => socket.write("PING\r\n"));
        socket.once("data", (data) => {
          socket.destroy();
          resolve(data.toString().startsWith("+PONG"));
        });
        socket.once("error", () => resolve(false));
      }),
    10_000,
  );
}
