/**
 * Benchmark (not a test): the query plan of every statement the service sends (issue 27: no
 * per-write or per-read cost may grow with a task's history or a table's size), on MariaDB and on
 * SQLite. Seeds a database as bench:scale does (`EXPLAIN_TASKS` tasks of 10 revisions, default
 * 100,000, plus one task of 10,000 revisions), runs the service with both pruning rules and the watch
 * poll on short timers, records every statement it sends while a client calls every RPC on the
 * seeded tasks and waits for pruning passes (explain-calls.ts), then explains each distinct
 * statement (the first one seen, with its real values). On MariaDB: one replica, MariaDB's general
 * log, EXPLAIN with the access type, index and expected rows per table; a step that reads a whole
 * table or index (`ALL`, `index`) is marked SCAN. On SQLite: explain-sqlite.ts.
 *
 *   npm run bench:explain
 *   EXPLAIN_TASKS=1000 EXPLAIN_DIALECTS=sqlite npm run bench:explain
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "mysql2/promise";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startReplica } from "../../test/harness/servers/replica";
import { EXPLAINABLE, exercise, shapeOf } from "./explain-calls";
import { explainSqlite } from "./explain-sqlite";
import { seedTasks } from "../shared/scale-seed";

const TASKS = Number(process.env.EXPLAIN_TASKS ?? 100_000);
const DIALECTS = (process.env.EXPLAIN_DIALECTS ?? "mysql,sqlite").split(",");

const IGNORED =
  /information_schema|general_log|schema_migrations|GET_LOCK|RELEASE_LOCK|^SELECT 1$|^SELECT VERSION|^SET |@@/i;

async function explainMariaDb(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-bench-explain-"));
  const mariadb = await startMariaDb({ durable: true });
  try {
    await createDatabase(mariadb.port, "explain");
    const databaseUrl = mariadb.urlFor("explain");
    const env = {
      PLAN_DATABASE_URL: databaseUrl,
      PLAN_RATE_LIMIT_WRITES: "0",
      PLAN_CHANGES_MAX_AGE_MS: "1000",
      PLAN_CHANGES_MAX_VERSIONS: "3",
      PLAN_CHANGES_PRUNE_INTERVAL_MS: "200",
      PLAN_WATCH_POLL_INTERVAL_MS: "200",
    };
    await (await startReplica(env, logDir, null, { name: "explain-migrate" })).stop();
    await seedTasks(databaseUrl, "t", TASKS, 10);
    await seedTasks(databaseUrl, "deep", 1, 10_000);
    const admin = await createConnection({ uri: databaseUrl, multipleStatements: false });
    try {
      await admin.query("ANALYZE TABLE tasks, task_plans, task_plan_revisions, task_plan_changes");
      await admin.query("SET GLOBAL log_output = 'TABLE'");
      await admin.query("TRUNCATE TABLE mysql.general_log");
      await admin.query("SET GLOBAL general_log = 1");
      const replica = await startReplica({ ...env, PLAN_MIGRATE_ON_START: "false" }, logDir, null, {
        name: "explain",
      });
      try {
        await exercise(replica.port, TASKS);
      } finally {
        await replica.stop();
        await admin.query("SET GLOBAL general_log = 0");
      }
      const [logged] = (await admin.query(
        "SELECT CONVERT(argument USING utf8mb4) AS statement FROM mysql.general_log WHERE command_type IN ('Query', 'Execute') ORDER BY event_time",
      )) as unknown as [{ statement: string }[]];
      const shapes = new Map<string, string>();
      for (const { statement } of logged) {
        if (IGNORED.test(statement) || !EXPLAINABLE.test(statement)) continue;
        const shape = shapeOf(statement);
        if (!shapes.has(shape)) shapes.set(shape, statement);
      }
      let scans = 0;
      console.log(`${shapes.size} distinct statements at ${TASKS} tasks (plus one of 10,000 revisions):\n`);
      for (const [shape, statement] of shapes) {
        const [plan] = (await admin.query(`EXPLAIN ${statement}`)) as unknown as [Record<string, unknown>[]];
        const steps = plan.map((step) => {
          const scan = step.type === "ALL" || step.type === "index";
          if (scan && Number(step.rows) > 100) scans += 1;
          const extra = step.Extra ? ` (${String(step.Extra)})` : "";
          return `${String(step.table ?? "-")}: ${String(step.type ?? "-")} ${String(step.key ?? "-")} rows=${String(step.rows ?? "-")}${extra}${scan && Number(step.rows) > 100 ? " SCAN" : ""}`;
        });
        console.log(`${shape.slice(0, 220)}\n    ${steps.join("\n    ")}\n`);
      }
      console.log(`${scans} steps read a whole table or index of more than 100 rows.`);
    } finally {
      await admin.end();
    }
  } finally {
    await mariadb.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (DIALECTS.includes("mysql")) {
    console.log("MariaDB (EXPLAIN):\n");
    await explainMariaDb();
  }
  if (DIALECTS.includes("sqlite")) {
    console.log("\nSQLite (EXPLAIN QUERY PLAN):\n");
    await explainSqlite(TASKS);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
