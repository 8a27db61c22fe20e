import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { createConnection } from "mysql2/promise";
import { freePort } from "../servers/free-port";
import { requireBinary, stopProcess, waitFor } from "../servers/processes";
import { tracked } from "../servers/started-processes";
import type { Pod, PodNetwork } from "../network/pod-network";
import { MARIADBD, templateDatadir } from "./mariadb";

/** Debian's galera-4 package installs the replication library here. */
export const GALERA_PROVIDER = "/usr/lib/galera/libgalera_smm.so";

/** The user the service connects as over TCP (root is for the harness, on each node's socket). */
export const GALERA_USER = "taskplans";
const GALERA_PASSWORD = "taskplans-pw";

/** What a node says about itself (SHOW GLOBAL STATUS). */
export interface NodeStatus {
  /** wsrep_ready: the node accepts queries (it is in the primary component and synced enough). */
  readonly ready: boolean;
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, Joined, Initialized... */
  readonly state: string;
  /** wsrep_cluster_status: Primary, non-Primary or Disconnected. */
  readonly component: string;
  readonly size: number;
}

/** One mariadbd of the cluster, started by the tests (in a pod of its own with a network). */
export interface GaleraNode {
  readonly index: number;
  /** The address the service reaches it on (127.0.0.1, or its pod's). */
  readonly host: string;
  readonly port: number;
  /** Its pod, when the cluster runs in a pod network (cut it off from the other nodes' addresses). */
  readonly pod: Pod | null;
  /** The PID of the running server, or -1. */
  readonly pid: number;
  readonly running: boolean;
  /** Its error log's tail. */
  log(): string;
  /** kill -9, then wait for the process to be gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean leave). */
  stop(): Promise<void>;
  /** Starts it again on its datadir: it rejoins the cluster (IST from a donor's gcache, or SST). */
  start(): Promise<void>;
  /** Its status, asked on its socket (root); throws when it does not answer. */
  status(): Promise<NodeStatus>;
  /** Makes this node's component primary again after the majority was lost (pc.bootstrap=YES). */
  bootstrap(): Promise<void>;
  /** Runs SQL as root on the node's socket. */
  sql(statement: string, parameters?: unknown[]): Promise<unknown[]>;
}

/** A throwaway 3-node (or `size`-node) Galera cluster. */
export interface GaleraCluster {
  readonly nodes: readonly GaleraNode[];
  /** The service's URL for `database` on each node, in node order (for the harness's own reads). */
  urlsFor(database: string): string[];
  /** PLAN_DATABASE_URL naming every node, node `first` first (the one the replica talks to at start). */
  clusterUrl(database: string, first: number): string;
  /** Until every running node has applied the same last write-set (reads through any see the same). */
  waitApplied(timeoutMs?: number): Promise<void>;
  /** Creates a database (replicated to every node, TOI). */
  createDatabase(name: string): Promise<void>;
  /** Until `count` nodes are in one primary component, each Synced and ready. */
  waitSynced(count?: number, timeoutMs?: number): Promise<void>;
  /** Stops exactly the servers this cluster started (SIGTERM, then SIGKILL), and removes its files. */
  stop(): Promise<void>;
}

/** How the cluster is started. */
export interface GaleraOptions {
  readonly size?: number;
  /** Each node in a pod (network namespace) of this network, so that a node can be partitioned. */
  readonly network?: PodNetwork;
}

// Failure detection a few seconds long instead of Galera's defaults (5 s suspect, 15 s inactive), so
// that a lost node leaves the component within the tests' time; gcache large enough for IST.
const PROVIDER_TIMING = [
  "evs.keepalive_period=PT0.5S",
  "evs.inactive_check_period=PT0.5S",
  "evs.suspect_timeout=PT2S",
  "evs.inactive_timeout=PT4S",
  "evs.install_timeout=PT4S",
  "pc.wait_prim_timeout=PT10S",
  "gcache.size=128M",
  // A restarted node keeps the write-sets of its gcache: a donor again for IST, also to the joiners
  // that start from its datadir (startGaleraCluster).
  "gcache.recover=yes",
];

interface NodePlan {
  readonly index: number;
  readonly host: string;
  readonly port: number;
  readonly replicationPort: number;
  readonly istPort: number;
  readonly sstPort: number;
  readonly dir: string;
  readonly pod: Pod | null;
}

/**
 * Starts a Galera cluster of `size` (3) mariadbd processes on free ports (server, group
 * communication, IST, SST each) with temp datadirs: the first node bootstraps a new cluster
 * (--wsrep-new-cluster) on a copy of the installed template, the others join it. Resolves
 * once every node is Synced in one primary component of `size`. On failure, stops what it started.
 */
export async function startGaleraCluster(options: GaleraOptions = {}): Promise<GaleraCluster> {
  requireBinary("mariadbd", "mariadb-server");
  if (!existsSync(GALERA_PROVIDER))
    throw new Error(
      `${GALERA_PROVIDER} is missing. Run the README's test command as root (it installs it), or: apt-get install -y galera-4 rsync`,
    );
  const size = options.size ?? 3;
  const root = mkdtempSync(join(tmpdir(), "taskplans-galera-"));
  chmodSync(root, 0o755); // the server's user (serverUser) reaches its node's directory
  const plans: NodePlan[] = [];
  for (let index = 0; index < size; index++) {
    const pod = options.network?.addPod() ?? null;
    plans.push({
      index,
      host: pod?.address ?? "127.0.0.1",
      port: await freePort(),
      replicationPort: await freePort(),
      istPort: await freePort(),
      sstPort: await freePort(),
      dir: join(root, `node${index}`),
      pod,
    });
  }
  const name = `taskplans-${root.slice(-6)}`;
  const members = plans.map((p) => `${p.host}:${p.replicationPort}`).join(",");
  for (const plan of plans) writeNodeFiles(plan, name, members);
  const nodes = plans.map((plan) => galeraNode(plan));
  const cluster: GaleraCluster = {
    nodes,
    urlsFor: (database) =>
      plans.map((p) => `mysql://${GALERA_USER}:${GALERA_PASSWORD}@${p.host}:${p.port}/${database}`),
    clusterUrl(database, first) {
      const order = plans.map((_, i) => plans[(first + i) % plans.length] as NodePlan);
      const hosts = order.map((p) => `${p.host}:${p.port}`).join(",");
      return `mysql://${GALERA_USER}:${GALERA_PASSWORD}@${hosts}/${database}`;
    },
    waitApplied: (timeoutMs = 30_000) =>
      waitFor(
        "Galera nodes applied alike",
        async () => {
          const committed = await Promise.all(
            nodes
              .filter((n) => n.running)
              .map(async (n) => {
                const rows = (await n.sql("SHOW GLOBAL STATUS LIKE 'wsrep_last_committed'")) as {
                  Value: string;
                }[];
                return rows[0]?.Value ?? "";
              }),
          );
          return new Set(committed).size === 1;
        },
        timeoutMs,
      ),
    async createDatabase(database) {
      const node = nodes.find((n) => n.running) ?? nodes[0];
      await node?.sql(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    },
    waitSynced: (count = size, timeoutMs = 90_000) => waitSynced(nodes, count, timeoutMs),
    async stop() {
      for (const node of nodes) await node.stop();
      if (!process.env.TASKPLANS_KEEP_GALERA) rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    const [first, ...others] = nodes as [NodeHandle, ...NodeHandle[]];
    const [firstPlan, ...otherPlans] = plans as [NodePlan, ...NodePlan[]];
    cpSync(templateDatadir(), join(firstPlan.dir, "data"), { recursive: true });
    await first.launch(true);
    await first.sql(`CREATE USER '${GALERA_USER}'@'%' IDENTIFIED BY '${GALERA_PASSWORD}'`);
    await first.sql(`GRANT ALL ON *.* TO '${GALERA_USER}'@'%'`);
    // The joiners start from the first node's datadir, stopped cleanly (its grastate.dat records the
    // cluster's state): they join with that state, and no SST runs. (rsync SST, which a node too far
    // behind for IST takes, cannot run as root here: its rsync daemon writes as nobody.)
    await first.stop();
    for (const plan of otherPlans)
      cpSync(join(firstPlan.dir, "data"), join(plan.dir, "data"), {
        recursive: true,
        filter: (source) => !source.endsWith("galera.cache"),
      });
    await first.launch(true);
    for (const node of others) await node.launch(false);
    await cluster.waitSynced(size);
  } catch (error) {
    const logs = nodes.map((n) => `node ${n.index}: ${n.log()}`).join("\n");
    await cluster.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs}`, { cause: error });
  }
  return cluster;
}

async function waitSynced(nodes: readonly GaleraNode[], count: number, timeoutMs: number): Promise<void> {
  let last = "";
  try {
    await waitFor(
      `${count} Galera nodes synced`,
      async () => {
        const statuses = await Promise.all(
          nodes.filter((n) => n.running).map((n) => n.status().catch(() => null)),
        );
        last = JSON.stringify(statuses);
        const synced = statuses.filter(
          (s) =>
            s !== null && s.ready && s.state === "Synced" && s.component === "Primary" && s.size === count,
        );
        return synced.length === count;
      },
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${last}`, { cause: error });
  }
}

interface NodeHandle extends GaleraNode {
  launch(newCluster: boolean): Promise<void>;
}

function writeNodeFiles(plan: NodePlan, clusterName: string, members: string): void {
  mkdirSync(plan.dir, { recursive: true });
  // Its own tmpdir: a server removes every "#sql*" file in its tmpdir when it starts (mariadb.ts).
  mkdirSync(join(plan.dir, "tmp"));
  const provider = [
    `gmcast.listen_addr=tcp://${plan.host}:${plan.replicationPort}`,
    `ist.recv_addr=${plan.host}:${plan.istPort}`,
    `base_host=${plan.host}`,
    `base_port=${plan.replicationPort}`,
    ...PROVIDER_TIMING,
  ].join(";");
  // A defaults file of its own (not --no-defaults): the SST scripts read the server's settings from it.
  const settings = [
    "[mariadbd]",
    `user=${serverUser()}`,
    `datadir=${join(plan.dir, "data")}`,
    `socket=${join(plan.dir, "mysql.sock")}`,
    `port=${plan.port}`,
    `bind-address=${plan.host}`,
    `pid-file=${join(plan.dir, "mysqld.pid")}`,
    `tmpdir=${join(plan.dir, "tmp")}`,
    `log-error=${join(plan.dir, "mysqld.err")}`,
    "innodb-buffer-pool-size=64M",
    "innodb-log-file-size=16M",
    "innodb-flush-log-at-trx-commit=0",
    "innodb-doublewrite=0",
    "innodb-autoinc-lock-mode=2",
    "binlog-format=ROW",
    "default-storage-engine=InnoDB",
    "max-connections=500",
    "character-set-server=utf8mb4",
    "collation-server=utf8mb4_bin",
    "wsrep-on=ON",
    `wsrep-provider=${GALERA_PROVIDER}`,
    `wsrep-cluster-name=${clusterName}`,
    `wsrep-cluster-address=gcomm://${members}`,
    `wsrep-node-name=node${plan.index}`,
    `wsrep-node-address=${plan.host}:${plan.replicationPort}`,
    `wsrep-provider-options="${provider}"`,
    "wsrep-sst-method=rsync",
    `wsrep-sst-receive-address=${plan.host}:${plan.sstPort}`,
    "wsrep-slave-threads=2",
    // Each certification failure and brute-force abort in the error log (what a conflict cost).
    "wsrep-log-conflicts=ON",
    "",
  ];
  writeFileSync(join(plan.dir, "my.cnf"), settings.join("\n"));
}

/**
 * The user the servers run as: Debian's `mysql` when the tests run as root. The SST and IST scripts
 * start an rsync daemon as the server's user, and one started by root writes as `nobody`, which
 * cannot write the datadir; the Debian service runs as mysql too.
 */
function serverUser(): string {
  const me = userInfo();
  if (me.uid !== 0) return me.username;
  return spawnSync("id", ["-u", "mysql"]).status === 0 ? "mysql" : me.username;
}

// The node's directory belongs to the server's user (its datadir was copied by root).
function own(dir: string): void {
  const user = serverUser();
  if (user === userInfo().username) return;
  const chown = spawnSync("chown", ["-R", `${user}:`, dir], { encoding: "utf8" });
  if (chown.status !== 0) throw new Error(`chown ${user} ${dir} failed: ${chown.stderr}`);
}

function galeraNode(plan: NodePlan): NodeHandle {
  let child: ChildProcess | null = null;
  const socketPath = join(plan.dir, "mysql.sock");
  const sql = async (statement: string, parameters: unknown[] = []) => {
    const connection = await createConnection({
      socketPath,
      user: "root",
      connectTimeout: 3_000,
      multipleStatements: true,
    });
    try {
      const [rows] = await connection.query(statement, parameters);
      return Array.isArray(rows) ? rows : [rows];
    } finally {
      await connection.end();
    }
  };
  const status = async (): Promise<NodeStatus> => {
    const rows = (await sql(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_status', 'wsrep_cluster_size')",
    )) as { Variable_name: string; Value: string }[];
    const value = (name: string) => rows.find((r) => r.Variable_name === name)?.Value ?? "";
    return {
      ready: value("wsrep_ready") === "ON",
      state: value("wsrep_local_state_comment"),
      component: value("wsrep_cluster_status"),
      size: Number(value("wsrep_cluster_size") || 0),
    };
  };
  const log = () => {
    try {
      return readFileSync(join(plan.dir, "mysqld.err"), "utf8").slice(-3000);
    } catch {
      return "(no log)";
    }
  };
  const running = () => child !== null && child.exitCode === null && child.signalCode === null;
  const launch = async (newCluster: boolean) => {
    own(plan.dir);
    const server = [MARIADBD, `--defaults-file=${join(plan.dir, "my.cnf")}`];
    if (newCluster) server.push("--wsrep-new-cluster");
    const argv = plan.pod ? [...plan.pod.exec, ...server] : server;
    const started = tracked(
      spawn(argv[0] ?? MARIADBD, argv.slice(1), { stdio: "ignore" }),
      `galera node ${plan.index} (mariadbd on ${plan.host}:${plan.port})`,
    );
    child = started;
    try {
      // Serving queries once joined: a joiner answers on its socket only after its state transfer.
      await waitFor(
        `galera node ${plan.index}`,
        async () => {
          if (started.exitCode !== null) throw new Error(`galera node ${plan.index} exited: ${log()}`);
          return (await status()).ready;
        },
        120_000,
      );
    } catch (error) {
      await stopProcess(started, 0);
      throw error;
    }
  };
  return {
    index: plan.index,
    host: plan.host,
    port: plan.port,
    pod: plan.pod,
    get pid() {
      return running() ? (child?.pid ?? -1) : -1;
    },
    get running() {
      return running();
    },
    log,
    launch,
    async kill() {
      if (child) await stopProcess(child, 0);
    },
    async stop() {
      if (child) await stopProcess(child, 30_000);
    },
    start: () => launch(false),
    status,
    async bootstrap() {
      await sql("SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'");
    },
    sql,
  };
}
