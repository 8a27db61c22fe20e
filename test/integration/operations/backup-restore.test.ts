import { spawn } from "node:child_process";
import Database from "better-sqlite3";
import { createConnection } from "mysql2/promise";
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
import type { OpRecord } from "../../harness/jepsen/history";
import { startWorkload } from "../../harness/jepsen/workload";
import { createDatabase, type MariaDb, startMariaDb } from "../../harness/databases/mariadb";
import { type CommandResult, requireBinary, runToExit } from "../../harness/servers/processes";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { checkHistoryKept, checkRestored } from "../../harness/databases/restore-drill";
import { seedPlans } from "../../harness/databases/seed-plans";
import { execSql } from "../../harness/databases/sql";
import { type Clients, connect, rpcError } from "../../harness/calls/rpc";
import { tracked } from "../../harness/servers/started-processes";

// Backups taken while the service writes, restored, and served again: the embedded database with
// the service's own command (`node dist/src/bin/backup.js`, SQLite's backup API), and MariaDB with the
// runbook's `mariadb-dump --single-transaction` restored into a fresh server under two replicas, then
// recovered to the end of its binary log (point-in-time recovery).
// The list-append workload (test/harness/jepsen) writes all along; the restored database must be
// one moment of its history that holds every write acknowledged before the backup began
// (test/harness/databases/restore-drill.ts). A client resuming WatchPlan from a version the backup does not
// hold gets WATCH_HISTORY_EXPIRED, never a silent gap: every restore is fenced (`node
// dist/src/bin/restore-fence.js`, run as shipped) before the service serves it, so no version of the
// lost timeline is given again, however far new writes go. Backup, restore and fence figures are printed.

const ROOT = join(__dirname, "..", "..", "..");
const BACKUP = join(ROOT, "dist", "src", "bin", "backup.js");
const FENCE = join(ROOT, "dist", "src", "bin", "restore-fence.js");
// The fence's default --version-margin (src/storage/restored-versions.ts), which the drills run it with.
const MARGIN = 1_000_000;
const OUT_OF_RANGE = 11;
const ABORTED = 10;
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
  version: number,
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
      expect([n, plan?.version, plan?.content]).toEqual([n, version, content]);
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

/** `node dist/src/bin/restore-fence.js` on the restored database, as the runbook runs it; its JSON figures. */
async function runFence(
  databaseUrl: string,
): Promise<{ tasks: number; changeRows: number; milliseconds: number }> {
  const run = await runToExit([process.execPath, FENCE], {
    env: { ...process.env, PLAN_DATABASE_URL: databaseUrl },
    timeoutMs: 600_000,
  });
  expect([run.code, run.stderr]).toEqual([0, ""]);
  const figures = JSON.parse(run.stdout) as {
    margin: number;
    tasks: number;
    changeRows: number;
    milliseconds: number;
  };
  expect(figures.margin).toBe(MARGIN);
  return figures;
}

const revisionCount = async (databaseUrl: string, taskId: string): Promise<number> =>
  Number(
    (
      (await execSql(databaseUrl, "SELECT COUNT(*) AS n FROM task_plan_revisions WHERE task_id = ?", [
        taskId,
      ])) as { n: number }[]
    )[0]?.n,
  );

/**
 * After the fence, the lost timeline is refused for good: each task is written 3 times (without the
 * fence its version would pass the lost timeline's again), then a WatchPlan resuming after a version
 * the lost timeline had (one above the restored plan's) ends WATCH_HISTORY_EXPIRED, and an UpdatePlan
 * with the version the plan would have had without the fence is refused VERSION_MISMATCH, changing
 * nothing; the history usage kept with HEAD is recounted by those writes and equals the measured one.
 */
async function expectLostTimelineRefused(
  api: Clients,
  databaseUrl: string,
  taskIds: readonly string[],
  history: readonly OpRecord[],
) {
  const lostAbove = new Map<string, number>();
  for (const taskId of taskIds) {
    const fenced = (await api.plans.getPlan({ taskId })).plan?.version ?? 0;
    const restored = fenced - MARGIN;
    lostAbove.set(taskId, restored);
    // The lost timeline did reach past the restored version for some task (checked below).
    for (let n = 1; n <= 3; n++)
      await api.plans.savePlan({ taskId, content: `# Plan\nafter the restore: ${n}\n` });
    const head = (await api.plans.getPlan({ taskId })).plan;
    expect(head?.version).toBe(restored + MARGIN + 3);
    const failure = await rpcError(
      new Promise((resolve, reject) => {
        const stream = api.plans.watchPlan({ taskId, afterVersion: restored + 1 });
        stream.on("data", resolve);
        stream.on("error", reject);
      }),
    );
    expect([failure.code, failure.reason, failure.metadata]).toEqual([
      OUT_OF_RANGE,
      "WATCH_HISTORY_EXPIRED",
      expect.objectContaining({
        after_version: String(restored + 1),
        current_version: String(head?.version),
      }),
    ]);
    const revisions = await revisionCount(databaseUrl, taskId);
    const stale = await rpcError(
      api.plans.updatePlan({ taskId, content: "from the lost timeline", expectedVersion: restored + 3 }),
    );
    expect([stale.code, stale.reason]).toEqual([ABORTED, "VERSION_MISMATCH"]);
    const after = (await api.plans.getPlan({ taskId })).plan;
    expect([after?.content, after?.version, await revisionCount(databaseUrl, taskId)]).toEqual([
      head?.content,
      head?.version,
      revisions,
    ]);
  }
  // Some task had writes acknowledged after the backup: versions the restore lost, now refused.
  const lost = history.filter(
    (op) => op.outcome === "ok" && (op.version ?? 0) > (lostAbove.get(op.taskId) ?? Infinity),
  );
  expect(lost.length).toBeGreaterThan(0);
  await checkHistoryKept(databaseUrl, taskIds);
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
      // -wal or -shm file of the old database beside it), the restore fence run on it, the service
      // started on it.
      await replica.stop();
      const restoredDir = join(dir, "restored");
      mkdirSync(restoredDir);
      const restoreStarted = Date.now();
      copyFileSync(backupFile, join(restoredDir, "plans.sqlite"));
      const url = `sqlite:${join(restoredDir, "plans.sqlite")}`;
      const fence = await runFence(url);
      expect(fence.tasks).toBe(SEEDED + taskIds.length);
      const restored = await startReplica({ ...WORKLOAD_ENV, PLAN_DATABASE_URL: url }, dir);
      cleanups.push(() => restored.stop());
      const api = connect(restored.port);
      cleanups.push(async () => api.close());
      const restoreMs = Date.now() - restoreStarted;
      const summary = await checkRestored(url, taskIds, history, backupStartedAt, [api], MARGIN);
      expect(summary.beforeBackup).toBeGreaterThan(0);
      await expectSeeded(url, seeded, [api], 3 + MARGIN);
      // The check has teeth: held to a backup that began after the load, the restored file fails it.
      await expect(checkRestored(url, taskIds, history, Date.now(), [api], MARGIN)).rejects.toThrow(
        /acknowledged before the backup began, is not in it/,
      );
      expect(summary.afterBackup).toBeGreaterThan(0);
      await expectLostTimelineRefused(api, url, taskIds, history);
      console.log(
        `[backup drill] SQLite, ${SEEDED} seeded tasks: backup of ${figures.bytes} bytes in ${figures.milliseconds} ms under load ` +
          `(the command's process ${result.elapsedMs} ms), restored (copied, fenced, service serving) in ${restoreMs} ms, ` +
          `of which the fence ${fence.milliseconds} ms (${fence.tasks} tasks, ${fence.changeRows} change rows); ` +
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

  it("the restore fence adds its margin on every run, and refuses a bad margin or database with one line and exit 1, changing nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "taskplans-fence-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const url = `sqlite:${join(dir, "plans.sqlite")}`;
    const fence = (env: Record<string, string>, args: string[] = []): Promise<CommandResult> =>
      runToExit([process.execPath, FENCE, ...args], { env: { ...process.env, ...env }, timeoutMs: 60_000 });
    const migrated = await runToExit([process.execPath, join(ROOT, "dist", "src", "bin", "migrate.js")], {
      env: { ...process.env, PLAN_DATABASE_URL: url },
      timeoutMs: 60_000,
    });
    expect(migrated.code).toBe(0);
    await seedPlans(url, "seed", 3, 3);
    // Their checklists as counted at their versions: the fence moves them with the versions.
    await execSql(
      url,
      "UPDATE task_plans SET checklist_checked = 1, checklist_total = 2, checklist_open_end = 0, checklist_version = version",
    );
    // A task without a plan: the fence gives it a tombstone at the margin.
    await execSql(
      url,
      "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES ('unplanned', 'ws', '', 0)",
    );
    const versions = async () =>
      (
        (await execSql(url, "SELECT version, history_version FROM task_plans ORDER BY task_id")) as {
          version: number;
          history_version: number | null;
        }[]
      ).map((row) => [row.version, row.history_version]);
    expect(await versions()).toEqual([
      [3, 3],
      [3, 3],
      [3, 3],
    ]);
    const oneLine = (run: CommandResult, text: string) =>
      expect([run.code, run.stdout, run.stderr]).toEqual([1, "", `restore fence failed: ${text}\n`]);
    const usage = "usage: restore-fence.js [--version-margin N]";
    oneLine(
      await fence({ PLAN_DATABASE_URL: url }, ["--version-margin", "0"]),
      '--version-margin must be a whole number from 1 up, got "0"',
    );
    oneLine(
      await fence({ PLAN_DATABASE_URL: url }, ["--version-margin=1e6"]),
      '--version-margin must be a whole number from 1 up, got "1e6"',
    );
    oneLine(await fence({ PLAN_DATABASE_URL: url }, ["--version-margin"]), usage);
    oneLine(await fence({ PLAN_DATABASE_URL: url }, ["--margin", "5"]), usage);
    oneLine(
      await fence({ PLAN_DATABASE_URL: url }, ["--version-margin", String(Number.MAX_SAFE_INTEGER)]),
      `the newest version (3) plus the margin (${Number.MAX_SAFE_INTEGER}) exceeds ${Number.MAX_SAFE_INTEGER}: choose a smaller --version-margin`,
    );
    oneLine(
      await fence({ PLAN_DATABASE_URL: `sqlite:${join(dir, "missing.sqlite")}` }),
      `PLAN_DATABASE_URL: no database file at ${join(dir, "missing.sqlite")}`,
    );
    const foreign = new Database(join(dir, "foreign.sqlite"));
    foreign.exec("CREATE TABLE t (x INTEGER)");
    foreign.close();
    oneLine(
      await fence({ PLAN_DATABASE_URL: `sqlite:${join(dir, "foreign.sqlite")}` }),
      "the database has no schema_migrations table: not a taskplans database",
    );
    const unreachable = await fence({ PLAN_DATABASE_URL: "mysql://root@127.0.0.1:1/plans" });
    expect([unreachable.code, unreachable.stderr]).toEqual([
      1,
      expect.stringMatching(/^restore fence failed: database unreachable: .+\n$/),
    ]);
    const unsupported = await fence({ PLAN_DATABASE_URL: "postgres://db/plans" });
    expect([unsupported.code, unsupported.stderr]).toEqual([
      1,
      expect.stringMatching(/^restore fence failed: .*PLAN_DATABASE_URL.*\n$/),
    ]);
    expect(await versions()).toEqual([
      [3, 3],
      [3, 3],
      [3, 3],
    ]);
    // Run twice (a re-run after a doubt): each run adds its margin, and nothing else changes.
    for (const margin of ["10", "--version-margin=7"]) {
      const run = await fence(
        { PLAN_DATABASE_URL: url },
        margin.startsWith("--") ? [margin] : ["--version-margin", margin],
      );
      expect([run.code, run.stderr]).toEqual([0, ""]);
      expect(JSON.parse(run.stdout)).toMatchObject({
        tasks: margin === "10" ? 3 : 4,
        tombstones: margin === "10" ? 1 : 0,
        changeRows: 0,
        batches: 1,
      });
    }
    expect(await versions()).toEqual([
      [20, null],
      [20, null],
      [20, null],
      [17, null],
    ]);
    // Its first plan starts above the margin, as after a delete.
    const [tombstone] = (await execSql(
      url,
      "SELECT deleted, latest_revision_number FROM task_plans WHERE task_id = 'unplanned'",
    )) as {
      deleted: number;
      latest_revision_number: number;
    }[];
    expect(tombstone).toEqual({ deleted: 1, latest_revision_number: 0 });
    expect(
      await execSql(
        url,
        "SELECT version, checklist_version FROM task_plans WHERE deleted = 0 ORDER BY task_id",
      ),
    ).toEqual(Array(3).fill({ version: 20, checklist_version: 20 }));
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
      // While anything (a replica left running) uses the database, the fence refuses and changes
      // nothing (the fence below moves every version by one margin).
      const lingering = await createConnection({ uri: fresh.urlFor("plans") });
      const refused = await runToExit([process.execPath, FENCE], {
        env: { ...process.env, PLAN_DATABASE_URL: fresh.urlFor("plans") },
        timeoutMs: 60_000,
      });
      await lingering.end();
      expect([refused.code, refused.stdout, refused.stderr]).toEqual([
        1,
        "",
        expect.stringMatching(
          /^restore fence failed: 1 other connection\(s\) use the database \(root@.+\): stop every replica \(scale the Deployment to 0\) and run the fence again\n$/,
        ),
      ]);
      const fence = await runFence(fresh.urlFor("plans"));
      expect(fence.tasks).toBe(SEEDED + taskIds.length);
      for (let i = 0; i < 2; i++)
        replicas.push(await startReplica({ ...env, PLAN_DATABASE_URL: fresh.urlFor("plans") }, dir));
      const clients = replicas.map((r) => connect(r.port));
      cleanups.push(async () => clients.forEach((c) => c.close()));
      const summary = await checkRestored(
        fresh.urlFor("plans"),
        taskIds,
        history,
        backupStartedAt,
        clients,
        MARGIN,
      );
      expect([summary.beforeBackup > 0, summary.afterBackup > 0]).toEqual([true, true]);
      await expectSeeded(fresh.urlFor("plans"), seeded, clients, 3 + MARGIN);
      await expectLostTimelineRefused(clients[1] as Clients, fresh.urlFor("plans"), taskIds, history);
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
      // Fenced too, as every restore is (a replay may stop before the log's end, at --stop-datetime).
      await runFence(recovered.urlFor("plans"));
      replicas.push(await startReplica({ ...env, PLAN_DATABASE_URL: recovered.urlFor("plans") }, dir));
      const pitrClient = connect(replicas[0]?.port ?? 0);
      cleanups.push(async () => pitrClient.close());
      const everything = await checkRestored(
        recovered.urlFor("plans"),
        taskIds,
        history,
        Infinity,
        [pitrClient],
        MARGIN,
      );
      expect([everything.afterBackup, everything.beforeBackup]).toEqual([0, everything.ok]);
      console.log(
        `[backup drill] MariaDB point-in-time recovery: dump and binary log (${logs.length} file(s) from ` +
          `${firstLog}:${startPosition}) replayed in ${recoveryMs} ms; all ${everything.ok} acknowledged writes back`,
      );

      console.log(
        `[backup drill] MariaDB, ${SEEDED} seeded tasks: dump of ${statSync(dumpFile).size} bytes in ${dumpMs} ms under load, ` +
          `restored in ${restoreMs} ms, fenced in ${fence.milliseconds} ms (${fence.tasks} tasks, ${fence.changeRows} change rows); ${summary.operations} ops, ${summary.beforeBackup} acknowledged before ` +
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
