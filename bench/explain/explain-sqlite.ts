import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { startApp } from "../../src/app";
import { loadConfig } from "../../src/config/config";
import { EXPLAINABLE, exercise, shapeOf } from "./explain-calls";
import { seedTasks } from "../shared/scale-seed";

/** The first run of each statement the service prepared: its text and the values it was run with. */
type Recorded = Map<string, { readonly sql: string; readonly values: unknown[] }>;

const IGNORED = /sqlite_master|schema_migrations|^\s*PRAGMA|^\s*SELECT 1$/i;
const TABLES = new Set(["tasks", "task_plans", "task_plan_revisions", "task_plan_changes", "write_requests"]);

/**
 * Records every statement better-sqlite3 prepares in this process from now on, with the values of
 * its first run (TypeORM's driver and the service's own statements alike); `stop` undoes it.
 */
function recordStatements(): { readonly recorded: Recorded; stop(): void } {
  type Prepare = (this: Database.Database, sql: string) => Database.Statement;
  const prototype = Database.prototype as unknown as { prepare: Prepare };
  const original = prototype.prepare;
  const recorded: Recorded = new Map();
  prototype.prepare = function prepare(sql) {
    const statement = original.call(this, sql);
    const methods = statement as unknown as Record<string, (...values: unknown[]) => unknown>;
    for (const method of ["run", "get", "all", "iterate"]) {
      const run = methods[method];
      if (!run) continue;
      methods[method] = (...values: unknown[]) => {
        const shape = shapeOf(sql);
        if (!recorded.has(shape)) recorded.set(shape, { sql, values });
        return run.apply(statement, values);
      };
    }
    return statement;
  };
  return { recorded, stop: () => (prototype.prepare = original) };
}

/**
 * bench:explain on SQLite. The service runs in this process, since statements cannot be logged from
 * another, on a file seeded as bench:scale seeds it (`tasks` tasks of 10 revisions and one of
 * 10,000; or its seed kept in SCALE_SEED_CACHE), with both pruning rules and the watch poll on short timers, while the same client as on
 * MariaDB calls every RPC. Then `EXPLAIN QUERY PLAN` runs on each distinct statement, with the
 * values it was first sent with, on a connection of its own, and prints the plan. A step that reads
 * a whole table or index of the service (`SCAN`, where a bounded read says `SEARCH ... (key=?)`) is
 * marked SCAN.
 */
export async function explainSqlite(tasks: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-bench-explain-sqlite-"));
  const file = join(dir, "explain.sqlite");
  const env = {
    PLAN_DATABASE_URL: `sqlite:${file}`,
    PLAN_GRPC_ADDRESS: "127.0.0.1:0",
    PLAN_HTTP_ADDRESS: "127.0.0.1:0",
    PLAN_METRICS_ADDRESS: "127.0.0.1:0",
    PLAN_LOG_LEVEL: "silent",
    PLAN_RATE_LIMIT_WRITES: "0",
    PLAN_CHANGES_MAX_AGE_MS: "1000",
    PLAN_CHANGES_MAX_VERSIONS: "3",
    PLAN_CHANGES_PRUNE_INTERVAL_MS: "200",
    PLAN_WATCH_POLL_INTERVAL_MS: "200",
  };
  const logger = pino({ level: "silent" });
  try {
    // A seed bench:scale kept (SCALE_SEED_CACHE) is the same rows: copied instead of seeded again.
    const cached = join(process.env.SCALE_SEED_CACHE ?? dir, `scale_${tasks}.sqlite`);
    if (existsSync(cached)) copyFileSync(cached, file);
    else {
      await (await startApp(loadConfig(env), { logger })).stop(); // migrates the new file
      await seedTasks(env.PLAN_DATABASE_URL, "t", tasks, 10);
      await seedTasks(env.PLAN_DATABASE_URL, "deep", 1, 10_000);
    }
    const recording = recordStatements();
    try {
      const app = await startApp(loadConfig({ ...env, PLAN_MIGRATE_ON_START: "false" }), { logger });
      try {
        await exercise(app.port, tasks);
      } finally {
        await app.stop();
      }
    } finally {
      recording.stop();
    }
    printPlans(file, recording.recorded, tasks);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printPlans(file: string, recorded: Recorded, tasks: number): void {
  const db = new Database(file, { readonly: true });
  try {
    const explained = [...recorded.entries()].filter(
      ([, { sql }]) => EXPLAINABLE.test(sql) && !IGNORED.test(sql),
    );
    let scans = 0;
    console.log(
      `${explained.length} distinct statements at ${tasks} tasks (plus one of 10,000 revisions):\n`,
    );
    for (const [shape, { sql, values }] of explained) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as {
        id: number;
        parent: number;
        detail: string;
      }[];
      const depth = new Map<number, number>([[0, 0]]);
      const steps = plan.map((step) => {
        const level = (depth.get(step.parent) ?? 0) + 1;
        depth.set(step.id, level);
        const table = /^SCAN (\w+)/.exec(step.detail)?.[1];
        const scan = table !== undefined && TABLES.has(table);
        if (scan) scans += 1;
        return `${"  ".repeat(level - 1)}${step.detail}${scan ? " SCAN" : ""}`;
      });
      console.log(`${shape.slice(0, 220)}\n    ${steps.join("\n    ")}\n`);
    }
    console.log(`${scans} steps read a whole table or index of the service.`);
  } finally {
    db.close();
  }
}
