import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { createConnection } from "mysql2/promise";
import { freePort } from "../servers/free-port";
import { requireBinary, stopProcess, waitFor } from "../servers/processes";
import { tracked } from "../servers/started-processes";

/** A throwaway MariaDB server started by the tests. */
export interface MariaDb {
  readonly port: number;
  readonly pid: number;
  /** Stops the server (SIGTERM) and starts it again on the same port and datadir. */
  restart(): Promise<void>;
  /** URL of a database on this server (created by createDatabase). */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

/** The server binary (Debian installs it in /usr/sbin). */
export const MARIADBD = existsSync("/usr/sbin/mariadbd") ? "/usr/sbin/mariadbd" : "mariadbd";

/**
 * Starts mariadbd on a free port with a temp datadir (copied from a cached template, ~0.1 s) and no
 * system config (--no-defaults), so nothing depends on a pre-started service.
 */
/**
 * `durable` keeps InnoDB's durable commits (flush the log at every commit, doublewrite) with a buffer
 * pool and redo log sized for a benchmark's working set; tests trade them for speed and memory.
 */
export async function startMariaDb(
  options: { alsoListenOn?: string; durable?: boolean; binlog?: string } = {},
): Promise<MariaDb> {
  // Tests connect as root over loopback; pods in network namespaces reach the extra address.
  const bindAddress = ["127.0.0.1", ...(options.alsoListenOn ? [options.alsoListenOn] : [])].join(",");
  requireBinary("mariadbd", "mariadb-server");
  const dir = mkdtempSync(join(tmpdir(), "taskplans-mariadb-"));
  cpSync(templateDatadir(), join(dir, "data"), { recursive: true });
  // Its own temporary directory: a server removes every "#sql*" file left in its tmpdir when it
  // starts, so with the shared /tmp one instance starting deleted another's temporary tables in use
  // ("Error on delete of '/tmp/#sql-temptable-...MAD'" in a query of the fault suite).
  mkdirSync(join(dir, "tmp"));
  const port = await freePort();
  const user = userInfo().username;
  const launch = (): ChildProcess =>
    tracked(
      spawn(
        MARIADBD,
        [
          "--no-defaults",
          `--user=${user}`,
          `--datadir=${join(dir, "data")}`,
          `--socket=${join(dir, "mysql.sock")}`,
          `--port=${port}`,
          `--bind-address=${bindAddress}`,
          `--pid-file=${join(dir, "mysqld.pid")}`,
          `--tmpdir=${join(dir, "tmp")}`,
          `--log-error=${join(dir, "mysqld.err")}`,
          // Tests shrink InnoDB and trade durability for speed. Benchmarks keep durable commits (flush
          // at every commit, doublewrite) and size InnoDB as a server would be for its working set
          // (plans of up to 256 KiB, their revisions and changes: a few hundred MiB in a bench).
          ...(options.durable
            ? ["--innodb-buffer-pool-size=1G", "--innodb-log-file-size=512M"]
            : [
                "--innodb-buffer-pool-size=64M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=0",
                "--innodb-doublewrite=0",
              ]),
          // `binlog`: the binary log's path prefix (row events, as point-in-time recovery replays them).
          ...(options.binlog
            ? [`--log-bin=${options.binlog}`, "--binlog-format=ROW", "--server-id=1"]
            : ["--skip-log-bin"]),
          "--max-connections=500",
          "--character-set-server=utf8mb4",
          "--collation-server=utf8mb4_bin",
        ],
        { stdio: "ignore" },
      ),
      `mariadbd on port ${port}`,
    );
  const url = (database: string) => `mysql://root@127.0.0.1:${port}/${database}`;
  const ready = (child: ChildProcess) =>
    waitFor(
      "mariadbd",
      async () => {
        if (child.exitCode !== null) throw new Error(`mariadbd exited: ${readLog(dir)}`);
        const connection = await createConnection({ host: "127.0.0.1", port, user: "root" });
        await connection.end();
        return true;
      },
      30_000,
    );
  let child = launch();
  try {
    await ready(child);
  } catch (error) {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    get pid() {
      return child.pid ?? -1;
    },
    urlFor: url,
    async restart() {
      await stopProcess(child, 20_000);
      child = launch();
      await ready(child);
    },
    async stop() {
      await stopProcess(child, 20_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates an empty database on the server (one per test suite keeps suites independent). */
export async function createDatabase(port: number, name: string): Promise<void> {
  const connection = await createConnection({ host: "127.0.0.1", port, user: "root" });
  try {
    await connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  } finally {
    await connection.end();
  }
}

/**
 * A freshly installed datadir (root without a password), built once per MariaDB version: copy it.
 * mariadb-install-db takes ~2 s; its result is cached per MariaDB version and copied per run.
 */
export function templateDatadir(): string {
  const version =
    spawnSync(MARIADBD, ["--version"], { encoding: "utf8" }).stdout.split(/\s+/)[2] ?? "unknown";
  const template = join(tmpdir(), `taskplans-mariadb-template-${version}`);
  if (existsSync(template)) return template;
  const building = `${template}.tmp.${process.pid}`;
  const result = spawnSync(
    "mariadb-install-db",
    [
      "--no-defaults",
      `--user=${userInfo().username}`,
      `--datadir=${building}`,
      "--auth-root-authentication-method=normal",
      "--skip-test-db",
      "--innodb-log-file-size=16M",
    ],
    { encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`mariadb-install-db failed: ${result.stderr || result.stdout}`);
  try {
    renameSync(building, template);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another run built it first
  }
  return template;
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, "mysqld.err"), "utf8").slice(-2000);
  } catch {
    return "(no log)";
  }
}
