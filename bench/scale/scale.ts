/**
 * Benchmark (not a test): what a read or a write costs as tables and a task's history grow (issue
 * 27). Per database and size: a fresh database seeded directly in SQL with `size` tasks of 10
 * revisions plus one task of 10,000 revisions (the rows the service writes, verified through the API
 * first), one replica built from this checkout, then p50/p99 (ms) of GetPlan, appends (one writer on
 * random tasks, 16 in flight, one writer on the deep task, on a young task), ListPlanRevisions
 * (first page of a random task, and page 50 of the deep task), WatchPlan open-to-snapshot, GetPlan
 * and append while the age rule prunes 100,000 change rows seeded past the limit (and how long it
 * took), the replica's RSS and the database size. Then the ratios the issue sets targets for.
 *
 *   npm run bench:scale
 *   SCALE_TASKS=1000,100000,1000000 SCALE_DIALECTS=mysql npm run bench:scale
 *   SCALE_SEED_CACHE=/var/tmp/seeds SCALE_TASKS=1000,1000000 SCALE_DIALECTS=sqlite npm run bench:scale
 */
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "mysql2/promise";
import { WriteMode } from "@taskplans/client";
import { createDatabase, type MariaDb, startMariaDb } from "../../test/harness/databases/mariadb";
import { type Replica, startReplica } from "../../test/harness/servers/replica";
import { type Clients, connect } from "../../test/harness/calls/rpc";
import { bytesReadFromDisk, memoryMb } from "../shared/process-stats";
import { SEED_CONTENT, seedOldChanges, seedTasks } from "../shared/scale-seed";

const SIZES = (process.env.SCALE_TASKS ?? "1000,100000").split(",").map(Number);
const DIALECTS = (process.env.SCALE_DIALECTS ?? "mysql,sqlite").split(",");
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 300);
const DEEP_REVISIONS = 10_000;
// Change rows past the age limit seeded for the prune measurement (as after a day of writes).
const PRUNED_ROWS = Number(process.env.SCALE_PRUNED_ROWS ?? 100_000);
// SQLite only: a folder that keeps each size's freshly seeded file, so a later run copies it instead
// of seeding again (about 17 minutes at 1,000,000 tasks). The copy is of the seed alone: every run
// measures on its own copy.
const SEED_CACHE = process.env.SCALE_SEED_CACHE;

type Figures = Record<string, { p50: number; p99: number }>;

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const summary = (values: readonly number[]) => ({ p50: quantile(values, 0.5), p99: quantile(values, 0.99) });

/** Latencies (ms) of `count` calls, `inFlight` at a time. */
async function latencies(
  count: number,
  inFlight: number,
  call: (i: number) => Promise<unknown>,
): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        const i = next++;
        const start = performance.now();
        await call(i);
        out.push(performance.now() - start);
      }
    }),
  );
  return out;
}

const appendTo = (client: Clients, taskId: string, i: number) =>
  client.plans.updatePlan({
    taskId,
    content: `- step ${i}: ${"y".repeat(60)}`,
    mode: WriteMode.WRITE_MODE_APPEND,
  });

async function verifySeed(client: Clients, size: number): Promise<void> {
  for (const taskId of ["t-0", `t-${size - 1}`, "deep-0"]) {
    const { plan } = await client.plans.getPlan({ taskId });
    const { revisions } = await client.plans.listPlanRevisions({ taskId, pageSize: 5 });
    const expected = taskId === "deep-0" ? DEEP_REVISIONS : 10;
    if (
      plan?.content !== SEED_CONTENT ||
      plan.latestRevisionNumber !== expected ||
      revisions[0]?.revisionNumber !== expected
    )
      throw new Error(`seeded task ${taskId} does not read back as seeded`);
  }
}

/**
 * Pages read from disk so far: InnoDB's (Innodb_buffer_pool_reads), or on SQLite the 4 KiB pages the
 * replica had read from the block device (what neither SQLite's page cache nor the kernel's held).
 */
type DiskReads = () => Promise<number | null>;

function diskReadsOf(databaseUrl: string, replicaPid: number): DiskReads {
  if (databaseUrl.startsWith("sqlite:")) return async () => bytesReadFromDisk(replicaPid) / 4096;
  return async () => {
    const connection = await createConnection({ uri: databaseUrl });
    try {
      const [rows] = await connection.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_reads'");
      return Number((rows as { Value: string }[])[0]?.Value ?? 0);
    } finally {
      await connection.end();
    }
  };
}

/** Disk reads per call of `calls`, beside their latencies. */
async function withDiskReads(
  diskReads: DiskReads,
  calls: () => Promise<number[]>,
): Promise<{ latencies: number[]; perCall: number | null }> {
  const before = await diskReads();
  const measured = await calls();
  const after = await diskReads();
  return {
    latencies: measured,
    perCall: before === null || after === null ? null : (after - before) / measured.length,
  };
}

async function measure(
  client: Clients,
  size: number,
  diskReads: DiskReads,
): Promise<{ figures: Figures; diskReads: Record<string, number | null> }> {
  const random = () => `t-${Math.floor(Math.random() * size)}`;
  const young = `t-${Math.floor(size / 2)}`;
  // Warm-up, not counted: connections, statement caches, the JIT.
  await latencies(100, 4, (i) => appendTo(client, random(), i));
  const deepPage = async () => {
    let token = "";
    for (let page = 1; page < 50; page++)
      token = (await client.plans.listPlanRevisions({ taskId: "deep-0", pageSize: 100, pageToken: token }))
        .nextPageToken;
    const start = performance.now();
    await client.plans.listPlanRevisions({ taskId: "deep-0", pageSize: 100, pageToken: token });
    return performance.now() - start;
  };
  const watchOpen = () =>
    new Promise<number>((resolve, reject) => {
      const start = performance.now();
      const stream = client.plans.watchPlan({ taskId: random() });
      stream.once("data", () => {
        resolve(performance.now() - start);
        stream.cancel();
      });
      stream.once("error", (error: { code?: number }) => {
        if (error.code !== 1) reject(error);
      });
    });
  const pages: number[] = [];
  for (let i = 0; i < 20; i++) pages.push(await deepPage());
  const watches: number[] = [];
  for (let i = 0; i < 100; i++) watches.push(await watchOpen());
  const oneWriter = await withDiskReads(diskReads, () =>
    latencies(SAMPLES, 1, (i) => appendTo(client, random(), i)),
  );
  const firstPage = await withDiskReads(diskReads, () =>
    latencies(SAMPLES, 1, () => client.plans.listPlanRevisions({ taskId: random(), pageSize: 20 })),
  );
  const figures: Figures = {
    GetPlan: summary(await latencies(SAMPLES, 1, () => client.plans.getPlan({ taskId: random() }))),
    "append, 1 writer, random task": summary(oneWriter.latencies),
    "append, 16 in flight": summary(await latencies(SAMPLES * 2, 16, (i) => appendTo(client, random(), i))),
    "append, young task": summary(await latencies(SAMPLES, 1, (i) => appendTo(client, young, i))),
    "append, 10,000-revision task": summary(
      await latencies(SAMPLES, 1, (i) => appendTo(client, "deep-0", i)),
    ),
    "ListPlanRevisions, first page": summary(firstPage.latencies),
    "ListPlanRevisions, page 50 (deep task)": summary(pages),
    "WatchPlan open to snapshot": summary(watches),
  };
  return {
    figures,
    diskReads: {
      "append, 1 writer, random task": oneWriter.perCall,
      "ListPlanRevisions, first page": firstPage.perCall,
    },
  };
}

/** Change rows left that the age rule deletes (older than a day). */
async function oldChanges(databaseUrl: string): Promise<number> {
  const cutoff = Date.now() - 86_400_000;
  if (databaseUrl.startsWith("sqlite:")) {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(databaseUrl.slice("sqlite:".length), { readonly: true });
    try {
      const row = db
        .prepare("SELECT COUNT(*) AS n FROM task_plan_changes WHERE committed_at < ?")
        .get(cutoff);
      return Number((row as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const connection = await createConnection({ uri: databaseUrl });
  try {
    const [rows] = await connection.query(
      "SELECT COUNT(*) AS n FROM task_plan_changes WHERE committed_at < ?",
      [cutoff],
    );
    return Number((rows as { n: number }[])[0]?.n ?? 0);
  } finally {
    await connection.end();
  }
}

/**
 * GetPlan and append (one writer, random tasks, alternating) while the age rule prunes `rows` change
 * rows seeded past the limit; with how long the pruning took. Passes never overlap (chained timers).
 */
async function duringPrune(
  client: Clients,
  databaseUrl: string,
  size: number,
): Promise<{ figures: Figures; seconds: number }> {
  await seedOldChanges(databaseUrl, "t", size, PRUNED_ROWS);
  const random = () => `t-${Math.floor(Math.random() * size)}`;
  const reads: number[] = [];
  const appends: number[] = [];
  const started = performance.now();
  let left = await oldChanges(databaseUrl);
  let checked = performance.now();
  for (let i = 0; left > 0; i++) {
    const start = performance.now();
    if (i % 2 === 0) {
      await client.plans.getPlan({ taskId: random() });
      reads.push(performance.now() - start);
    } else {
      await appendTo(client, random(), i);
      appends.push(performance.now() - start);
    }
    if (performance.now() - checked > 250) {
      left = await oldChanges(databaseUrl);
      checked = performance.now();
    }
  }
  return {
    figures: { "GetPlan during a prune": summary(reads), "append during a prune": summary(appends) },
    seconds: (performance.now() - started) / 1000,
  };
}

async function databaseMb(databaseUrl: string): Promise<number> {
  if (databaseUrl.startsWith("sqlite:")) return statSync(databaseUrl.slice("sqlite:".length)).size / 1048576;
  const connection = await createConnection({ uri: databaseUrl });
  try {
    const [rows] = await connection.query(
      "SELECT SUM(data_length + index_length) AS size FROM information_schema.tables WHERE table_schema = DATABASE()",
    );
    return Number((rows as { size: number }[])[0]?.size ?? 0) / 1048576;
  } finally {
    await connection.end();
  }
}

async function runSize(dialect: string, size: number, mariadb: MariaDb | null, logDir: string) {
  const name = `scale_${size}`;
  let databaseUrl = `sqlite:${join(logDir, `${name}.sqlite`)}`;
  if (mariadb) {
    await createDatabase(mariadb.port, name);
    databaseUrl = mariadb.urlFor(name);
  }
  const env = {
    PLAN_DATABASE_URL: databaseUrl,
    PLAN_COALESCE_WINDOW_MS: "0",
    PLAN_RATE_LIMIT_WRITES: "0",
    PLAN_HISTORY_MAX_REVISIONS: "0",
    // The default age limit (a day); a pass every second works through a backlog within the run.
    PLAN_CHANGES_PRUNE_INTERVAL_MS: "1000",
  };
  let replica: Replica | null = await startReplica(env, logDir, null, { name: `${dialect}-${size}-migrate` });
  await replica.stop(); // migrated the fresh database; the seed goes in with no server running
  const seeded = performance.now();
  const cached = SEED_CACHE && !mariadb ? join(SEED_CACHE, `${name}.sqlite`) : null;
  if (cached && existsSync(cached)) {
    copyFileSync(cached, databaseUrl.slice("sqlite:".length));
    syncFile(databaseUrl.slice("sqlite:".length));
  } else {
    await seedTasks(databaseUrl, "t", size, 10);
    await seedTasks(databaseUrl, "deep", 1, DEEP_REVISIONS);
    // The seed's own pages go to disk before anything is measured, not during it (the kernel
    // writes a fresh 5.5 GB file back for minutes, and a checkpoint's sync waits for all of it).
    if (!mariadb) syncFile(databaseUrl.slice("sqlite:".length));
    if (cached) {
      mkdirSync(SEED_CACHE as string, { recursive: true });
      copyFileSync(databaseUrl.slice("sqlite:".length), `${cached}.partial`);
      renameSync(`${cached}.partial`, cached);
    }
  }
  const seedSeconds = (performance.now() - seeded) / 1000;
  replica = await startReplica({ ...env, PLAN_MIGRATE_ON_START: "false" }, logDir, null, {
    name: `${dialect}-${size}`,
  });
  const client = connect(replica.port);
  try {
    await verifySeed(client, size);
    const measured = await measure(client, size, diskReadsOf(databaseUrl, replica.pid));
    const { seconds: pruneSeconds, figures: pruning } = await duringPrune(client, databaseUrl, size);
    return {
      figures: { ...measured.figures, ...pruning },
      diskReads: measured.diskReads,
      pruneSeconds,
      rssMb: memoryMb(replica.pid).rss,
      databaseMb: await databaseMb(databaseUrl),
      seedSeconds,
    };
  } finally {
    client.close();
    await replica.stop();
  }
}

/** Writes a file's dirty pages to disk and waits for it. */
function syncFile(path: string): void {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const fmt = (n: number) => n.toFixed(2).padStart(8);

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-bench-scale-"));
  try {
    for (const dialect of DIALECTS) {
      const mariadb = dialect === "mysql" ? await startMariaDb({ durable: true }) : null;
      try {
        const results = [];
        for (const size of SIZES) {
          const result = await runSize(dialect, size, mariadb, logDir);
          results.push({ size, ...result });
          console.log(
            `${dialect} ${size} tasks: seeded in ${result.seedSeconds.toFixed(0)} s, ${PRUNED_ROWS} old change rows pruned in ${result.pruneSeconds.toFixed(1)} s, RSS ${result.rssMb.toFixed(0)} MB, database ${result.databaseMb.toFixed(0)} MB`,
          );
        }
        console.log(`\n${dialect}: p50 / p99 (ms) per size, and p50 of the largest over the smallest`);
        const operations = Object.keys(results[0]?.figures ?? {});
        for (const operation of operations) {
          const cells = results.map(
            (r) => `${fmt(r.figures[operation]?.p50 ?? 0)} /${fmt(r.figures[operation]?.p99 ?? 0)}`,
          );
          const first = results[0]?.figures[operation]?.p50 ?? 1;
          const last = results.at(-1)?.figures[operation]?.p50 ?? 0;
          console.log(`${operation.padEnd(40)} ${cells.join("   ")}   ${(last / first).toFixed(2)}x`);
        }
        for (const r of results) {
          for (const [operation, reads] of Object.entries(r.diskReads))
            if (reads !== null)
              console.log(`${r.size} tasks: disk reads per call of ${operation}: ${reads.toFixed(2)}`);
          for (const [during, outside] of [
            ["GetPlan during a prune", "GetPlan"],
            ["append during a prune", "append, 1 writer, random task"],
          ] as const)
            console.log(
              `${r.size} tasks: ${during}, p99 over p99 outside it: ${((r.figures[during]?.p99 ?? 0) / (r.figures[outside]?.p99 ?? 1)).toFixed(2)}x`,
            );
          const deep = r.figures["append, 10,000-revision task"]?.p50 ?? 0;
          const young = r.figures["append, young task"]?.p50 ?? 1;
          console.log(
            `${r.size} tasks: append to the 10,000-revision task / a young task: ${(deep / young).toFixed(2)}x`,
          );
        }
        console.log("");
      } finally {
        await mariadb?.stop();
      }
    }
  } catch (error) {
    console.error(`the replicas' logs are kept in ${logDir}`);
    throw error;
  }
  rmSync(logDir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
