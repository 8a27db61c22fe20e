/**
 * Benchmark (not a test): the query plan of every statement the service sends (issue 27: no
 * per-write or per-read cost may grow with a task's history or a table's size). Seeds a MariaDB
 * database as bench:scale does (`EXPLAIN_TASKS` tasks of 10 revisions, default 100,000, plus one task
 * of 10,000 revisions), runs one replica with both pruning rules and the watch poll on short timers,
 * records every statement it sends (MariaDB's general log) while a client calls every RPC on the
 * seeded tasks and waits for pruning passes, then runs EXPLAIN on each distinct statement (the first
 * one seen, with its real values) and prints, per table it reads, the access type, the index and
 * the rows MariaDB expects to examine. A statement that reads a whole table or index (`ALL`,
 * `index`) is marked SCAN.
 *
 *   npm run bench:explain
 *   EXPLAIN_TASKS=1000 npm run bench:explain
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "mysql2/promise";
import { WriteMode } from "../clients/ts/src";
import { createDatabase, startMariaDb } from "../test/harness/mariadb";
import { startReplica } from "../test/harness/replica";
import { connect } from "../test/harness/rpc";
import { seedTasks } from "./scale-seed";

const TASKS = Number(process.env.EXPLAIN_TASKS ?? 100_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A statement's shape: its literals replaced, so that one EXPLAIN stands for every call of it. */
const shapeOf = (sql: string) =>
  sql
    .replace(/'(?:[^'\\]|\\.)*'/g, "?")
    .replace(/\b\d+\b/g, "?")
    .replace(/\(\?(?:, \?)+\)/g, "(?...)")
    .replace(/(?:\(\?\.\.\.\)(?:, )?)+/g, "(?...)")
    .replace(/\s+/g, " ")
    .trim();

const EXPLAINABLE = /^\s*(SELECT|UPDATE|DELETE|INSERT INTO \S+ \([^)]*\) VALUES \(.*\(SELECT)/is;
const IGNORED =
  /information_schema|general_log|schema_migrations|GET_LOCK|RELEASE_LOCK|^SELECT 1$|^SELECT VERSION|^SET |@@/i;

async function exercise(port: number): Promise<void> {
  const client = connect(port);
  try {
    const young = `t-${Math.floor(TASKS / 2)}`;
    const author = { kind: 1, name: "explain" };
    await client.tasks.getTask({ taskId: young });
    await client.plans.getPlan({ taskId: young });
    await client.plans.updatePlan({
      taskId: young,
      content: "- appended",
      mode: WriteMode.WRITE_MODE_APPEND,
      author,
    });
    // The deep task is at the default budget of 10,000 revisions: the refusal recounts first.
    await client.plans
      .updatePlan({ taskId: "deep-0", content: "- appended", mode: WriteMode.WRITE_MODE_APPEND, author })
      .then(
        () => {
          throw new Error("an append past the revision budget was accepted");
        },
        () => undefined,
      );
    const { plan } = await client.plans.getPlan({ taskId: young });
    await client.plans.updatePlan({
      taskId: young,
      content: `${plan?.content ?? ""}\n- replaced`,
      mode: WriteMode.WRITE_MODE_REPLACE,
      expectedVersion: plan?.version,
      author: { kind: 1, name: "other" },
    });
    const current = (await client.plans.getPlan({ taskId: young })).plan;
    await client.plans.editPlan({
      taskId: young,
      expectedVersion: current?.version,
      oldText: "- replaced",
      newText: "- edited",
      author,
    });
    await client.plans.savePlan({ taskId: young, content: "# Saved by the editor" });
    let token = "";
    for (let page = 0; page < 3; page++)
      token = (await client.plans.listPlanRevisions({ taskId: "deep-0", pageSize: 100, pageToken: token }))
        .nextPageToken;
    const { revisions } = await client.plans.listPlanRevisions({ taskId: young, pageSize: 20 });
    const oldest = revisions.at(-1);
    if (!oldest) throw new Error("the seeded task has no revisions");
    await client.plans.getPlanRevision({ taskId: young, revisionId: oldest.id });
    await client.plans.revertPlan({ taskId: young, revisionId: oldest.id });
    const head = (await client.plans.getPlan({ taskId: young })).plan;
    const { revisions: after } = await client.plans.listPlanRevisions({ taskId: young, pageSize: 20 });
    const target = after[3];
    if (target)
      await client.plans.restorePlanRevision({
        taskId: young,
        revisionId: target.id,
        expectedVersion: head?.version,
        expectedRevisionVersion: target.revisionVersion,
        author,
      });
    await client.plans.markImplementationStarted({ taskId: young, sessionId: "explain", actor: "bench" });
    // A watch resuming from an old version reads the change history (with content, an append's
    // rows derived from the next), then stays open through a few polls.
    await client.tasks.createTask({ taskId: "explain-new", workspaceId: "ws" });
    await client.plans.createPlan({ taskId: "explain-new", content: "# New" });
    for (const step of ["one", "two", "three"])
      await client.plans.updatePlan({
        taskId: "explain-new",
        content: `- ${step}`,
        mode: WriteMode.WRITE_MODE_APPEND,
      });
    const watch = client.plans.watchPlan({ taskId: "explain-new", afterVersion: 1, includeContent: true });
    let received = 0;
    watch.on("data", () => (received += 1));
    watch.on("error", () => undefined);
    await sleep(1_500);
    watch.cancel();
    if (received < 3) throw new Error(`the watch caught up with ${received} of 3 changes`);
    await client.plans.deletePlan({ taskId: young });
    await client.tasks.deleteTask({ taskId: `t-${Math.floor(TASKS / 3)}` });
    await sleep(2_000); // pruning passes by age and per task
  } finally {
    client.close();
  }
}

async function main(): Promise<void> {
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
        await exercise(replica.port);
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

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
