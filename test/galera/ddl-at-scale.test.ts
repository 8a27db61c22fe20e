import { createConnection } from "mysql2/promise";
import { join } from "node:path";
import { type GaleraCluster, startGaleraCluster } from "../harness/databases/galera";
import { seedPlans } from "../harness/databases/seed-plans";
import { runToExit } from "../harness/servers/processes";
import { repoRoot } from "../harness/servers/repo-root";
import { createDataSource } from "../../src/storage/data-source";

const TASKS = 100_000;
// The migrations whose DDL touches the big tables, newest first (undone in this order, redone back).
const MEASURED = 3;

describe("migration DDL on a 3-node Galera cluster at 100,000 tasks: how long it blocks the cluster", () => {
  let cluster: GaleraCluster;
  beforeAll(async () => {
    cluster = await startGaleraCluster();
  }, 120_000);
  afterAll(() => cluster?.stop());

  it("runs each of the newest migrations through node 0 while a writer through node 1 measures its longest commit", async () => {
    const database = "ddl_scale";
    await cluster.createDatabase(database);
    const [node0, node1] = cluster.urlsFor(database) as [string, string];
    const migrated = await runToExit(["node", join(repoRoot(), "dist", "src", "bin", "migrate.js")], {
      env: { ...process.env, PLAN_DATABASE_URL: node0 },
      timeoutMs: 120_000,
    });
    expect(migrated.code).toBe(0);
    let started = Date.now();
    await seedPlans(node0, "scale", TASKS, 2);
    const seedMs = Date.now() - started;
    await cluster.waitApplied(120_000);

    // A writer through node 1, on a table of its own: what a write anywhere waits while DDL runs (TOI).
    const pulse = await createConnection({ uri: node1 });
    await pulse.query("CREATE TABLE pulse (id BIGINT AUTO_INCREMENT PRIMARY KEY, at DATETIME(6) NOT NULL)");
    let worst = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const at = performance.now();
        await pulse.query("INSERT INTO pulse (at) VALUES (NOW(6))");
        worst = Math.max(worst, performance.now() - at);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    const dataSource = createDataSource(node0, { poolSize: 1 });
    await dataSource.initialize();
    const runner = dataSource.createQueryRunner();
    const figures: string[] = [];
    try {
      const migrations = dataSource.migrations.slice(-MEASURED);
      for (const migration of [...migrations].reverse()) await migration.down?.(runner);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const quiet = worst;
      for (const migration of migrations) {
        worst = 0;
        started = Date.now();
        await migration.up(runner);
        await new Promise((resolve) => setTimeout(resolve, 100)); // the writer's commit after it
        figures.push(
          `${migration.name ?? migration.constructor.name}: ${Date.now() - started - 100} ms on node 0, the writer through node 1 waited up to ${worst.toFixed(0)} ms`,
        );
      }
      console.log(
        `[galera ddl] ${TASKS} tasks x 2 revisions seeded in ${seedMs} ms; the writer's worst commit while the three were undone ${quiet.toFixed(0)} ms; ${figures.join("; ")}`,
      );
    } finally {
      writing = false;
      await writer;
      await pulse.end();
      await runner.release();
      await dataSource.destroy();
    }
    expect(figures).toHaveLength(MEASURED);
  });
});
