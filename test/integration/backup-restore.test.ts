import { spawn } from "node:child_process";
import Database from "better-sqlite3";
import {
  copyFileSync,
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { OpRecord } from "../harness/jepsen/history";
import { startWorkload } from "../harness/jepsen/workload";
import { createDatabase, type MariaDb, startMariaDb } from "../harness/databases/mariadb";
import { type CommandResult, requireBinary, runToExit } from "../harness/servers/processes";
import { type RedisNode, startRedisNodes } from "../harness/databases/redis";
import { type Replica, startReplica } from "../harness/servers/replica";
import { checkRestored, type RestoredSummary } from "../harness/databases/restore-drill";
import { seedPlans } from "../harness/databases/seed-plans";
import { execSql } from "../harness/databases/sql";
import { type Clients, connect, rpcError } from "../harness/calls/rpc";
import { tracked } from "../harness/servers/started-processes";

// Backups taken while the service writes, restored, and served again: the embedded database with
// the service's own command (`node dist/src/backup.js`, SQLite's backup API), and MariaDB with the
// runbook's `mariadb-dump --single-transaction` restored into a fresh server under two replicas, then
// recovered to the end of its binary log (point-in-time recovery).
// The list-append workload (test/harness/jepsen) writes all along; the restored database must be
// one moment of its history that holds every write acknowledged before the backup began
// (test/harness/databases/restore-drill.ts). A client resuming WatchPlan from a version the backup does not
// hold gets WATCH_HISTORY_EXPIRED, never a silent gap. Backup and restore figures are printed.

const ROOT = join(__dirname, "..", "..");
const BACKUP = join(ROOT, "dist", "src", "backup.js");
const OUT_OF_RANGE = 11;
// Every write is its own revision, so the checker replays each one.
const WORKLOAD_ENV = { PLAN_COALESCE_WINDOW_MS: "0" };
// Tasks seeded (three revisions each) before the load, so the backup has a database's bulk to copy.
// `BACKUP_DRILL_TASKS=100000` (npm run drill:backup) measures the backup and restore of a large one.
const SEEDED = Number(process.env.BACKUP_DRILL_TASKS ?? 2_000);
const TIMEOUT_MS = 120_000 + SEEDED * 6;

/** Every seeded task is in the restored database, and a spread of them reads back through each replica. */
async function expectSeeded(
  databaseUrl: string,
  content: string,
  replicas: readonly Clients[],
): Promise<void> {
  const [row] = (await execSql(
    databaseUrl,
    "SELECT COUNT(*) AS n FROM task_plans WHERE task_id LIKE 'seed-%'",
  )) as {
    n: number;
  }[];
  expect(Number(row?.n)).toBe(SEEDED);
  const step = Math.max(1, Math.floor(SEEDED / 200));
  for (const api of replicas)
    for (let n = 0; n < SEEDED; n += step) {
      const plan = (await api.plans.getPlan({ taskId: `seed-${n}` })).plan;
      expect([n, plan?.version, plan?.content]).toEqual([n, 3, content]);
    }
}

/** The list-append workload through `replicas` until `stop()`; `during` runs while it writes. */
async function underLoad<T>(
  replicas: readonly Replica[],
  taskIds: readonly string[],
  during: () => Promise<T>,
): Promise<{ history: OpRecord[]; result: T }> {
  const setup = connect(replicas[0]?.port ?? 0);
  for (const taskId of taskIds) {
    await setup.tasks.createTask({ taskId, workspaceId: "ws" });
    await setup.plans.createPlan({ taskId, content: "# Plan\nstatus: 0\n" });
  }
  setup.close();
  let stopped = false;
  const workload = startWorkload({
    stop: () => stopped,
    ports: replicas.map((r) => r.port),
    taskIds,
    clients: 4,
    operations: Number.MAX_SAFE_INTEGER,
    deadlineMs: 5_000,
  });
  try {
    await sleep(1_500);
    const result = await during();
    await sleep(1_000); // writes after the backup: the restore must not hold them
    return { history: await stop(), result };
  } finally {
    await stop();
  }
  function stop(): Promise<OpRecord[]> {
    stopped = true;
    return workload.done();
  }
}

/** A task written after the backup: resuming after its newest acknowledged version is refused. */
async function expectResumeRefused(api: Clients, history: readonly OpRecord[], restored: RestoredSummary) {
  expect(restored.afterBackup).toBeGreaterThan(0);
  const newest = new Map<string, number>();
  for (const op of history)
    if (op.outcome === "ok") newest.set(op.taskId, Math.max(newest.get(op.taskId) ?? 0, op.version ?? 0));
  let refused = 0;
  for (const [taskId, version] of newest) {
    const head = (await api.plans.getPlan({ taskId })).plan?.version ?? 0;
    if (version <= head) continue;
    const failure = await rpcError(
      new Promise((resolve, reject) => {
        const stream = api.plans.watchPlan({ taskId, afterVersion: version });
        stream.on("data", resolve);
        stream.on("error", reject);
      }),
    );
    expect([failure.code, failure.reason, failure.metadata]).toEqual([
      OUT_OF_RANGE,
      "WATCH_HISTORY_EXPIRED",
      expect.objectContaining({ after_version: String(version), current_version: String(head) }),
    ]);
    refused++;
  }
  expect(refused).toBeGreaterThan(0);
}

const taskIdsFor = (name: string) => Array.from({ length: 6 }, (_, i) => `${name}-${i}-${process.pid}`);

describe("backup and restore drills", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it(
    "the embedded database: an online backup under load restores into a service holding every write acknowledged before it",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "taskplans-backup-sqlite-"));
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      const source = join(dir, "plans.sqlite");
      const replica = await startReplica({ ...WORKLOAD_ENV, PLAN_DATABASE_URL: `sqlite:${source}` }, dir);
      cleanups.push(() => replica.stop());
      const taskIds = taskIdsFor("sqlite");
      const seeded = await seedPlans(`sqlite:${source}`, "seed", SEEDED, 3);
      const backupFile = join(dir, "backup", "plans.sqlite");
      mkdirSync(join(dir, "backup"));
      let backupStartedAt = 0;
      const { history, result } = await underLoad([replica], taskIds, async () => {
        backupStartedAt = Date.now();
        return runToExit([process.execPath, BACKUP, backupFile], {
          env: { ...process.env, PLAN_DATABASE_URL: `sqlite:${source}` },
          timeoutMs: 60_000,
        });
      });
      expect([result.code, result.stderr]).toEqual([0, ""]);
      const figures = JSON.parse(result.stdout) as { bytes: number; milliseconds: number };
      expect(figures.bytes).toBe(statSync(backupFile).size);
      // The documented restore: the service stopped, the backup copied in as the database file (no
      // -wal or -shm file of the old database beside it), the service started on it.
      await replica.stop();
      const restoredDir = join(dir, "restored");
      mkdirSync(restoredDir);
      const restoreStarted = Date.now();
      copyFileSync(backupFile, join(restoredDir, "plans.sqlite"));
      const url = `sqlite:${join(restoredDir, "plans.sqlite")}`;
      const restored = await startReplica({ ...WORKLOAD_ENV, PLAN_DATABASE_URL: url }, dir);
      cleanups.push(() => restored.stop());
      const api = connect(restored.port);
      cleanups.push(async () => api.close());
      const restoreMs = Date.now() - restoreStarted;
      const summary = await checkRestored(url, taskIds, history, backupStartedAt, [api]);
      expect(summary.beforeBackup).toBeGreaterThan(0);
      await expectSeeded(url, seeded, [api]);
      // The check has teeth: held to a backup that began after the load, the restored file fails it.
      await expect(checkRestored(url, taskIds, history, Date.now(), [api])).rejects.toThrow(
        /acknowledged before the backup began, is not in it/,
      );
      await expectResumeRefused(api, history, summary);
      console.log(
        `[backup drill] SQLite, ${SEEDED} seeded tasks: backup of ${figures.bytes} bytes in ${figures.milliseconds} ms under load ` +
          `(the command's process ${result.elapsedMs} ms), restored (copied, service serving) in ${restoreMs} ms; ` +
          `${summary.operations} ops, ${summary.beforeBackup} acknowledged before the backup began, ` +
          `${summary.inBackup} in it, ${summary.afterBackup} after it; ${summary.revisions} revisions replayed`,
      );
    },
    TIMEOUT_MS,
  );

  it("the backup command refuses a destination that exists and a MySQL URL, writing nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "taskplans-backup-refusals-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const run = (env: Record<string, string>, destination: string): Promise<CommandResult> =>
      runToExit([process.execPath, BACKUP, destination], {
        env: { ...process.env, ...env },
        timeoutMs: 30_000,
      });
    const exists = join(dir, "exists.sqlite");
    copyFileSync(__filename, exists);
    const before = statSync(exists).size;
    const source = new Database(join(dir, "source.sqlite"));
    source.exec("CREATE TABLE t (x INTEGER)");
    source.close();
    const refusedExisting = await run({ PLAN_DATABASE_URL: `sqlite:${join(dir, "source.sqlite")}` }, exists);
    expect([refusedExisting.code, refusedExisting.stderr]).toEqual([
      1,
      `backup failed: ${exists} exists: choose a new file\n`,
    ]);
    expect(statSync(exists).size).toBe(before);
    const refusedMysql = await run(
      { PLAN_DATABASE_URL: "mysql://root@127.0.0.1:1/x" },
      join(dir, "m.sqlite"),
    );
    expect([refusedMysql.code, refusedMysql.stderr]).toEqual([
      1,
      expect.stringContaining("mariadb-dump --single-transaction"),
    ]);
  });

  it(
    "MariaDB: mariadb-dump --single-transaction under load restores into a fresh server that two replicas serve; the binary log replayed from its position recovers every acknowledged write",
    async () => {
      requireBinary("mariadb-dump", "mariadb-client");
      requireBinary("mariadb-binlog", "mariadb-client");
      const dir = mkdtempSync(join(tmpdir(), "taskplans-backup-mariadb-"));
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      const servers: MariaDb[] = [];
      const nodes: RedisNode[] = [];
      const replicas: Replica[] = [];
      cleanups.push(async () => {
        for (const replica of replicas) await replica.stop();
        for (const node of nodes) await node.stop();
        for (const server of servers) await server.stop();
      });
      // The live server keeps a binary log (outside its datadir, which its stop removes), for the
      // point-in-time recovery below.
      mkdirSync(join(dir, "binlog"));
      const live = await startMariaDb({ binlog: join(dir, "binlog", "mariadb-bin") });
      servers.push(live);
      await createDatabase(live.port, "plans");
      nodes.push(...(await startRedisNodes(1)));
      const env = { ...WORKLOAD_ENV, PLAN_REDIS_URLS: nodes.map((n) => n.url).join(",") };
      for (let i = 0; i < 2; i++)
        replicas.push(await startReplica({ ...env, PLAN_DATABASE_URL: live.urlFor("plans") }, dir));
      const taskIds = taskIdsFor("mariadb");
      const seeded = await seedPlans(live.urlFor("plans"), "seed", SEEDED, 3);
      const dumpFile = join(dir, "plans.sql");
      let backupStartedAt = 0;
      const { history, result } = await underLoad(replicas, taskIds, async () => {
        backupStartedAt = Date.now();
        return runToExit(
          [
            "mariadb-dump",
            "--single-transaction",
            "--master-data=2", // the binary-log position of the snapshot, as a comment
            "--default-character-set=utf8mb4",
            "--host=127.0.0.1",
            `--port=${live.port}`,
            "--user=root",
            `--result-file=${dumpFile}`,
            "plans",
          ],
          { timeoutMs: 120_000 },
        );
      });
      expect([result.code, result.stderr]).toEqual([0, ""]);
      const dumpMs = result.elapsedMs;
      // The live server is gone; the dump goes into a fresh one, and two replicas start on it.
      for (const replica of replicas.splice(0)) await replica.stop();
      await live.stop();
      const fresh = await startMariaDb();
      servers.push(fresh);
      await createDatabase(fresh.port, "plans");
      const restoreStarted = Date.now();
      const restore = await runMariadbFrom(dumpFile, fresh.port, "plans");
      expect([restore.code, restore.stderr]).toEqual([0, ""]);
      const restoreMs = Date.now() - restoreStarted;
      for (let i = 0; i < 2; i++)
        replicas.push(await startReplica({ ...env, PLAN_DATABASE_URL: fresh.urlFor("plans") }, dir));
      const clients = replicas.map((r) => connect(r.port));
      cleanups.push(async () => clients.forEach((c) => c.close()));
      const summary = await checkRestored(fresh.urlFor("plans"), taskIds, history, backupStartedAt, clients);
      expect(summary.beforeBackup).toBeGreaterThan(0);
      await expectSeeded(fresh.urlFor("plans"), seeded, clients);
      await expectResumeRefused(clients[1] as Clients, history, summary);
      // Point-in-time recovery: the dump into another fresh server, then the binary log replayed from
      // the dump's position to its end: every acknowledged write is back, the later ones included.
      for (const replica of replicas.splice(0)) await replica.stop();
      const recovered = await startMariaDb();
      servers.push(recovered);
      await createDatabase(recovered.port, "plans");
      const recoveryStarted = Date.now();
      const reloaded = await runMariadbFrom(dumpFile, recovered.port, "plans");
      expect([reloaded.code, reloaded.stderr]).toEqual([0, ""]);
      const position = /MASTER_LOG_FILE='([^']+)', MASTER_LOG_POS=(\d+)/.exec(readFileSync(dumpFile, "utf8"));
      expect(position).not.toBeNull();
      const [, firstLog = "", startPosition = ""] = position ?? [];
      const logs = readdirSync(join(dir, "binlog"))
        .filter((name) => /^mariadb-bin\.\d+$/.test(name) && name >= firstLog)
        .sort()
        .map((name) => join(dir, "binlog", name));
      const events = join(dir, "binlog-events.sql");
      const decoded = await runToExit(
        ["mariadb-binlog", `--start-position=${startPosition}`, `--result-file=${events}`, ...logs],
        { timeoutMs: 120_000 },
      );
      expect([decoded.code, decoded.stderr]).toEqual([0, ""]);
      const replayed = await runMariadbFrom(events, recovered.port, "plans");
      expect([replayed.code, replayed.stderr]).toEqual([0, ""]);
      const recoveryMs = Date.now() - recoveryStarted;
      replicas.push(await startReplica({ ...env, PLAN_DATABASE_URL: recovered.urlFor("plans") }, dir));
      const pitrClient = connect(replicas[0]?.port ?? 0);
      cleanups.push(async () => pitrClient.close());
      const everything = await checkRestored(recovered.urlFor("plans"), taskIds, history, Infinity, [
        pitrClient,
      ]);
      expect([everything.afterBackup, everything.beforeBackup]).toEqual([0, everything.ok]);
      console.log(
        `[backup drill] MariaDB point-in-time recovery: dump and binary log (${logs.length} file(s) from ` +
          `${firstLog}:${startPosition}) replayed in ${recoveryMs} ms; all ${everything.ok} acknowledged writes back`,
      );

      console.log(
        `[backup drill] MariaDB, ${SEEDED} seeded tasks: dump of ${statSync(dumpFile).size} bytes in ${dumpMs} ms under load, ` +
          `restored in ${restoreMs} ms; ${summary.operations} ops, ${summary.beforeBackup} acknowledged before ` +
          `the dump began, ${summary.inBackup} in it, ${summary.afterBackup} after it; ${summary.revisions} revisions replayed`,
      );
    },
    TIMEOUT_MS,
  );
});

/** `mariadb <database> < file` against the server on `port`, as the runbook's restore runs it. */
function runMariadbFrom(file: string, port: number, database: string): Promise<CommandResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = tracked(
      spawn("mariadb", [
        "--host=127.0.0.1",
        `--port=${port}`,
        "--user=root",
        "--default-character-set=utf8mb4",
        database,
      ]),
      `mariadb restore into port ${port}`,
    );
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr, elapsedMs: Date.now() - started }));
    if (child.stdin) createReadStream(file).pipe(child.stdin);
  });
}
