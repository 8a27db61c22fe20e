import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DataSource } from "typeorm";
import { WriteMode } from "@taskplans/contract";
import { createDataSource } from "../../../src/storage/data-source";
import { poolStats } from "../../../src/storage/pool-stats";
import { walFileBytes } from "../../../src/storage/wal-file-bytes";
import { createDatabase } from "../../harness/databases/mariadb";
import { startTestApp } from "../../harness/servers/test-app";

// The database gauges (observability/metrics databaseGauges) and what they read: the MariaDB pool
// that reads and write transactions take their connections from, and the embedded database's
// write-ahead log file.

interface Held {
  release(): void;
}
const takeConnection = (dataSource: DataSource) =>
  (dataSource.driver as unknown as { obtainMasterConnection(): Promise<Held> }).obtainMasterConnection();

const scrape = async (port: number | null) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
const sample = (body: string, series: string): number | null => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
};

describe("poolStats on MariaDB's pool", () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    const port = Number(process.env.TEST_MARIADB_PORT);
    const database = `p_${randomBytes(6).toString("hex")}`;
    await createDatabase(port, database);
    dataSource = createDataSource(`mysql://root@127.0.0.1:${port}/${database}`, { poolSize: 2 });
    await dataSource.initialize();
  });
  afterAll(async () => {
    if (dataSource.isInitialized) await dataSource.destroy();
  });

  it("counts connections in use and idle, and requests waiting once every connection is taken", async () => {
    // initialize() opened one connection to check the credentials, and gave it back.
    expect(poolStats(dataSource)).toEqual({ inUse: 0, idle: 1, waiting: 0, limit: 2 });
    const first = await takeConnection(dataSource);
    const second = await takeConnection(dataSource);
    expect(poolStats(dataSource)).toEqual({ inUse: 2, idle: 0, waiting: 0, limit: 2 });
    const third = takeConnection(dataSource);
    const fourth = takeConnection(dataSource);
    expect(poolStats(dataSource)).toEqual({ inUse: 2, idle: 0, waiting: 2, limit: 2 });
    first.release(); // handed on to the first request in the queue
    expect(poolStats(dataSource)).toMatchObject({ inUse: 2, waiting: 1 });
    second.release();
    const taken = await Promise.all([third, fourth]);
    expect(poolStats(dataSource)).toEqual({ inUse: 2, idle: 0, waiting: 0, limit: 2 });
    for (const connection of taken) connection.release();
    expect(poolStats(dataSource)).toEqual({ inUse: 0, idle: 2, waiting: 0, limit: 2 });
  });

  it("has no figures once the data source is destroyed", async () => {
    await dataSource.destroy();
    expect(poolStats(dataSource)).toBeNull();
  });
});

describe("walFileBytes", () => {
  it("reads the -wal file's size when called, 0 without the file; nothing for MySQL or a database in memory", () => {
    const dir = mkdtempSync(join(tmpdir(), "taskplans-wal-bytes-"));
    try {
      const file = join(dir, "plans.sqlite");
      const read = walFileBytes(createDataSource(`sqlite:${file}`, { poolSize: 1 }));
      expect(read?.()).toBe(0);
      writeFileSync(`${file}-wal`, Buffer.alloc(12_345));
      expect(read?.()).toBe(12_345);
      rmSync(`${file}-wal`);
      expect(read?.()).toBe(0);
      expect(walFileBytes(createDataSource("sqlite::memory:", { poolSize: 1 }))).toBeNull();
      expect(walFileBytes(createDataSource("mysql://root@127.0.0.1:1/none", { poolSize: 1 }))).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the database gauges a replica exports", () => {
  it("on MariaDB: the pool's connections by state, waiting requests and limit; no WAL gauge", async () => {
    const app = await startTestApp("mysql", { env: { PLAN_DATABASE_POOL_SIZE: "3" } });
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "# Plan\n" });
      const body = await scrape(app.metricsPort);
      expect(sample(body, "taskplans_db_pool_max_connections")).toBe(3);
      expect(sample(body, "taskplans_db_pool_waiting_requests")).toBe(0);
      const inUse = sample(body, 'taskplans_db_pool_connections{state="in_use"}');
      const idle = sample(body, 'taskplans_db_pool_connections{state="idle"}');
      expect([inUse, idle]).toEqual([expect.any(Number), expect.any(Number)]);
      // Whatever the background holds at this instant (health ping, pruning), the pool has opened
      // at least the connection the calls used and never more than its limit.
      expect((inUse ?? 0) + (idle ?? 0)).toBeGreaterThanOrEqual(1);
      expect((inUse ?? 0) + (idle ?? 0)).toBeLessThanOrEqual(3);
      expect(body).not.toContain("taskplans_sqlite_wal_bytes");
    } finally {
      await app.stop();
    }
  });

  it("on SQLite: the size of the database's -wal file; no pool gauges", async () => {
    const app = await startTestApp("sqlite");
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "# Plan\n" });
      for (let i = 0; i < 20; i++)
        await app.plans.updatePlan({ taskId, content: `- ${i}`, mode: WriteMode.WRITE_MODE_APPEND });
      const body = await scrape(app.metricsPort);
      // No commit since: the log only starts over (same file size) or stays as it is.
      const file = `${app.databaseUrl.slice("sqlite:".length)}-wal`;
      expect(sample(body, "taskplans_sqlite_wal_bytes")).toBe(statSync(file).size);
      expect(statSync(file).size).toBeGreaterThan(0);
      expect(body).not.toContain("taskplans_db_pool_");
    } finally {
      await app.stop();
    }
  });
});
