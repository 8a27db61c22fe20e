import { createMetrics, databaseGauges } from "../../../src/observability/metrics";

// What the Prometheus registry exports for what the service reports (no server: the registry's text).
describe("metrics", () => {
  it("counts pruning passes in a row that left work, back to 0 after a complete one", async () => {
    const { metrics, registry } = createMetrics();
    const passes = async () =>
      (await registry.getSingleMetric("taskplans_changes_prune_incomplete_passes")?.get())?.values[0]?.value;
    expect(await passes()).toBe(0);
    metrics.changesPrunePass(false);
    metrics.changesPrunePass(false);
    metrics.changesPrunePass(false);
    expect(await passes()).toBe(3);
    metrics.changesPrunePass(true);
    expect(await passes()).toBe(0);
    metrics.changesPrunePass(false);
    expect(await passes()).toBe(1);
  });

  it("reads the pool at every scrape, and registers no pool gauges for a pool that gives no figures", async () => {
    const { registry } = createMetrics();
    let figures = { inUse: 4, idle: 1, waiting: 0, limit: 5 };
    databaseGauges(registry, { pool: () => figures });
    const text = async () =>
      (await registry.metrics()).split("\n").filter((l) => l.startsWith("taskplans_db_pool"));
    expect(await text()).toEqual([
      'taskplans_db_pool_connections{state="in_use"} 4',
      'taskplans_db_pool_connections{state="idle"} 1',
      "taskplans_db_pool_waiting_requests 0",
      "taskplans_db_pool_max_connections 5",
    ]);
    figures = { inUse: 5, idle: 0, waiting: 7, limit: 5 };
    expect(await text()).toEqual([
      'taskplans_db_pool_connections{state="in_use"} 5',
      'taskplans_db_pool_connections{state="idle"} 0',
      "taskplans_db_pool_waiting_requests 7",
      "taskplans_db_pool_max_connections 5",
    ]);
    const other = createMetrics().registry;
    databaseGauges(other, { pool: () => null, walBytes: null });
    expect(await other.metrics()).not.toMatch(/taskplans_db_pool|taskplans_sqlite_wal_bytes/);
  });

  it("exports the WAL file's size as read at each scrape, keeping the last one when a read fails", async () => {
    const { registry } = createMetrics();
    const sizes: (number | null)[] = [0, 8_192, null];
    databaseGauges(registry, { walBytes: () => sizes.shift() ?? null });
    const wal = async () => (await registry.metrics()).match(/^taskplans_sqlite_wal_bytes (\d+)$/m)?.[1];
    expect([await wal(), await wal(), await wal()]).toEqual(["0", "8192", "8192"]);
  });
});
