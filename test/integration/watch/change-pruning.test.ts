import { checkHealth, healthClient } from "../../harness/calls/grpc-clients";
import { execSql } from "../../harness/databases/sql";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

// The background pruner on a real server and database: more than two batches (of 1,000 on MySQL,
// 200 on SQLite) of changes past the age limit are deleted with exact counts, passes keep ending (a
// later backlog is pruned too), and health and reads answer all along. Old rows are seeded straight into the table: the
// pruner selects by committed_at only, and writing 2,500 versions through the API would take long.
const AGE_LIMIT_MS = 60_000;

// Inserted as fresh rows, then aged in one statement, so no pass sees part of them.
async function seedOldChanges(app: TestApp, taskId: string, from: number, count: number, at: number) {
  for (let start = from; start < from + count; start += 500) {
    const rows = Math.min(500, from + count - start);
    const values = Array.from({ length: rows }, () => "(?, ?, 0, 'updated', ?, '{}', 'agent', 'seed')");
    const params = Array.from({ length: rows }, (_, i) => [taskId, start + i, now]).flat();
    await execSql(
      app.databaseUrl,
      "INSERT INTO task_plan_changes (task_id, version, step, kind, committed_at, plan, author_kind, author_name)" +
        ` VALUES ${values.join(", ")}`,
      params,
    );
  }
  await execSql(
    app.databaseUrl,
    "UPDATE task_plan_changes SET committed_at = ? WHERE task_id = ? AND version >= ?",
    [at, taskId, from],
  );
}

async function prunedTotal(app: TestApp): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith("taskplans_changes_pruned_total "));
  return Number(line?.split(" ")[1] ?? Number.NaN);
}

async function rowsOf(app: TestApp, taskId: string): Promise<number> {
  const [row] = (await execSql(
    app.databaseUrl,
    "SELECT COUNT(*) AS n FROM task_plan_changes WHERE task_id = ?",
    [taskId],
  )) as { n: number | string }[];
  return Number(row?.n);
}

const within = <T>(what: string, ms: number, call: Promise<T>): Promise<T> =>
  Promise.race([
    call,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not answer in ${ms} ms`)), ms),
    ),
  ]);

let now = Date.parse("2026-12-01T10:00:00Z");

describe.each(DATABASES)("change pruning ($label)", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: {
        PLAN_CHANGES_MAX_AGE_MS: String(AGE_LIMIT_MS),
        PLAN_CHANGES_MAX_VERSIONS: "0",
        PLAN_CHANGES_PRUNE_INTERVAL_MS: "200",
      },
      overrides: { clock: () => new Date(now) },
    });
  });
  afterAll(() => app.stop());

  it("deletes every change past the age limit in batches, exactly, while health and reads answer", async () => {
    const { taskId: readTask } = await app.planWith("# Plan\n\nread during the prune");
    const seeded = await app.newTask();
    const old = now - 10 * AGE_LIMIT_MS;
    await seedOldChanges(app, seeded, 1, 2_500, old);

    const health = healthClient(app.port);
    let probes = 0;
    try {
      let total = await prunedTotal(app);
      while (total < 2_500) {
        // Every turn: a health check and a plan read, each answered (a starved loop answers neither).
        expect(await within("health", 3_000, checkHealth(health))).toBe("SERVING");
        const read = await within("GetPlan", 3_000, app.plans.getPlan({ taskId: readTask }));
        expect(read.plan?.version).toBe(1);
        probes += 1;
        total = await prunedTotal(app);
        if (probes > 2_000) throw new Error(`pruned ${total} rows so far, expected 2,500`);
      }
      expect(total).toBe(2_500);
      expect(await rowsOf(app, seeded)).toBe(0);
      expect(await rowsOf(app, readTask)).toBe(1);

      // The pass ended and the next ones run: a second backlog is pruned too, exactly.
      await seedOldChanges(app, seeded, 2_501, 1_200, old);
      for (let i = 0; (await prunedTotal(app)) < 3_700 && i < 200; i++) {
        expect(await within("health", 3_000, checkHealth(health))).toBe("SERVING");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await prunedTotal(app)).toBe(3_700);
      expect(await rowsOf(app, seeded)).toBe(0);

      // The live change ages out like any other.
      now += 2 * AGE_LIMIT_MS;
      for (let i = 0; (await rowsOf(app, readTask)) > 0 && i < 200; i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await rowsOf(app, readTask)).toBe(0);
      expect(await prunedTotal(app)).toBe(3_701);
    } finally {
      health.close();
    }
  });
});
