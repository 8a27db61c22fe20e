import { join } from "node:path";
import { type GaleraCluster, startGaleraCluster } from "../harness/databases/galera";
import { freePort } from "../harness/servers/free-port";
import { runToExit } from "../harness/servers/processes";
import { repoRoot } from "../harness/servers/repo-root";

const MIGRATE = ["node", join(repoRoot(), "dist", "src", "bin", "migrate.js")];

describe("migrations on a 3-node Galera cluster", () => {
  let cluster: GaleraCluster;
  beforeAll(async () => {
    cluster = await startGaleraCluster();
  }, 120_000);
  afterAll(() => cluster?.stop());

  const migrate = (database: string, node: number, env: Record<string, string> = {}) =>
    runToExit(MIGRATE, {
      env: { ...process.env, PLAN_DATABASE_URL: cluster.urlsFor(database)[node] ?? "", ...env },
      timeoutMs: 120_000,
    });

  it("two migration Jobs at once through two nodes take turns: each migration applied once, both exit 0", async () => {
    const database = "two_jobs";
    await cluster.createDatabase(database);
    const [a, b] = await Promise.all([migrate(database, 0), migrate(database, 1)]);
    expect([a.code, a.stderr, b.code, b.stderr]).toEqual([0, "", 0, ""]);
    // One applied them all, the other found the schema current.
    expect([a.stdout, b.stdout].filter((out) => out.startsWith("migrations applied:"))).toHaveLength(1);
    const names = (await cluster.nodes[2]?.sql(`SELECT name FROM ${database}.schema_migrations`)) as {
      name: string;
    }[];
    expect(names).toHaveLength(11);
    expect(new Set(names.map((n) => n.name)).size).toBe(11);
  });

  it("every table has a primary key (Galera replicates rows by it)", async () => {
    const database = "keys";
    await cluster.createDatabase(database);
    expect((await migrate(database, 0)).code).toBe(0);
    const keyless = await cluster.nodes[1]?.sql(
      "SELECT t.TABLE_NAME AS name FROM information_schema.TABLES t LEFT JOIN information_schema.TABLE_CONSTRAINTS c" +
        " ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME AND c.CONSTRAINT_TYPE = 'PRIMARY KEY'" +
        " WHERE t.TABLE_SCHEMA = ? AND t.TABLE_TYPE = 'BASE TABLE' AND c.CONSTRAINT_NAME IS NULL",
      [database],
    );
    const tables = (await cluster.nodes[1]?.sql(
      "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
      [database],
    )) as { n: number }[];
    expect(Number(tables[0]?.n)).toBeGreaterThan(4);
    expect(keyless).toEqual([]);
  });

  it("a migration holding the cluster's lock through one node keeps out a Job through another (GET_LOCK alone would not)", async () => {
    const database = "held";
    await cluster.createDatabase(database);
    expect((await migrate(database, 0)).code).toBe(0); // creates the lock's row
    await cluster.nodes[0]?.sql(
      `UPDATE ${database}.schema_migration_lock SET holder = 'job-on-node-0', expires_at = NOW(6) + INTERVAL 60 SECOND`,
    );
    const result = await migrate(database, 1, { PLAN_MIGRATION_LOCK_WAIT_MS: "1000" });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `migration failed: could not take the migration lock of database ${database} within 1000 ms ` +
        "(another migration holds it on the Galera cluster: job-on-node-0; PLAN_MIGRATION_LOCK_WAIT_MS)",
    );
    await cluster.nodes[0]?.sql(
      `UPDATE ${database}.schema_migration_lock SET holder = NULL, expires_at = NULL`,
    );
    expect((await migrate(database, 2)).code).toBe(0);
  });

  it("the migration Job given the node list goes through the first node that can take writes (the first named is down)", async () => {
    const database = "first_down";
    await cluster.createDatabase(database);
    const closed = await freePort();
    const url = (cluster.urlsFor(database)[1] ?? "").replace("@", `@127.0.0.1:${closed},`);
    const result = await migrate(database, 1, { PLAN_DATABASE_URL: url });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(result.stdout).toMatch(/^migrations applied: /);
  });
});
