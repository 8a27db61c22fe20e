import { createDataSource } from "../../../src/storage/data-source";
import { runMigrations } from "../../../src/storage/migrations-runner";
import { execSql } from "../../harness/databases/sql";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

/**
 * The history usage kept with HEAD (issue 27: the budget reads one row per write) against a full
 * recount of what the database stores, after every step of a long seeded random sequence of every
 * kind of write, with both pruning rules and the budget's own trimming running all along; and the
 * migration and the recount that give figures to rows written without them.
 */

const APPEND = 2;
const REPLACE = 1;
const STEPS = Number(process.env.HISTORY_USAGE_STEPS ?? 160);

// What the kept figures stand for, measured row by row in the same statement (one snapshot).
const COMPARE =
  "SELECT p.history_revisions AS kept_revisions, p.history_bytes AS kept_bytes, p.history_version AS kept_at," +
  " p.version AS version," +
  " (SELECT COUNT(*) FROM task_plan_revisions r WHERE r.task_id = p.task_id) AS revisions," +
  " (SELECT COALESCE(SUM(r.content_bytes), 0) FROM task_plan_revisions r WHERE r.task_id = p.task_id)" +
  " + (SELECT COALESCE(SUM(c.stored_bytes), 0) FROM task_plan_changes c WHERE c.task_id = p.task_id) AS bytes," +
  " (SELECT COUNT(*) FROM task_plan_changes c WHERE c.task_id = p.task_id AND c.stored_bytes IS NULL) AS unrecorded" +
  " FROM task_plans p WHERE p.task_id = ?";

type Compared = { kept: [number, number, number]; counted: [number, number, number]; unrecorded: number };

async function compared(app: TestApp, taskId: string): Promise<Compared | null> {
  const [row] = (await execSql(app.databaseUrl, COMPARE, [taskId])) as Record<
    string,
    number | string | null
  >[];
  if (!row) return null;
  return {
    kept: [Number(row.kept_revisions), Number(row.kept_bytes), Number(row.kept_at)],
    counted: [Number(row.revisions), Number(row.bytes), Number(row.version)],
    unrecorded: Number(row.unrecorded),
  };
}

// A small seeded generator (mulberry32), so that a failing sequence replays exactly.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe.each(DATABASES)("the history usage kept with HEAD, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: {
        // Coalescing on (one author in a row rewrites its revision), and the budget small enough
        // that the change history yields to it and some writes are refused.
        PLAN_COALESCE_WINDOW_MS: "3600000",
        PLAN_HISTORY_MAX_BYTES: "120000",
        PLAN_HISTORY_MAX_REVISIONS: "60",
        // Both pruning rules run all along: by age (a second) and past a task's last 6 versions.
        PLAN_CHANGES_MAX_AGE_MS: "1000",
        PLAN_CHANGES_MAX_VERSIONS: "6",
        PLAN_CHANGES_PRUNE_INTERVAL_MS: "100",
      },
    });
  });
  afterAll(() => app.stop());

  it(`equals a full recount after every step of ${STEPS} random writes (seeded)`, async () => {
    const seed = Number(process.env.HISTORY_USAGE_SEED ?? 27);
    const next = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    // Every text starts with a token found nowhere else, which an edit can replace.
    let made = 0;
    const text = () =>
      `<${made++}> ` +
      `${pick(["# Plan", "- step", "ünïcode ✓", "emoji 🧭", "tabs\t\t"])} `.repeat(
        1 + Math.floor(next() * 800),
      );
    const authors = [
      { kind: 1, name: "agent-a" },
      { kind: 1, name: "agent-b" },
      { kind: 2, name: "editor" },
    ];
    let taskId = await app.newTask();
    const log: string[] = [];
    const kinds = new Set<string>();
    for (let step = 0; step < STEPS; step++) {
      const { plan } = await app.plans.getPlan({ taskId }).catch(() => ({ plan: undefined }));
      const { revisions } = await app.plans
        .listPlanRevisions({ taskId, pageSize: 50 })
        .catch(() => ({ revisions: [] as { id: string; revisionVersion: string }[] }));
      const author = pick(authors);
      const kind = plan
        ? pick([
            "append",
            "append",
            "append",
            "replace",
            "save",
            "edit",
            "revert",
            "restore",
            "delete",
            "mark",
            "wait",
          ])
        : pick(["create", "save", "revert"]);
      const attempt = async (): Promise<unknown> => {
        switch (kind) {
          case "create":
            return app.plans.createPlan({ taskId, content: text(), author });
          case "save":
            return app.plans.savePlan({ taskId, content: text(), author: { kind: 2, name: author.name } });
          case "append":
            return app.plans.updatePlan({ taskId, content: `\n${text()}\n \n`, mode: APPEND, author });
          case "replace":
            return app.plans.updatePlan({
              taskId,
              content: text(),
              mode: REPLACE,
              expectedVersion: plan?.version,
              acknowledgeReduction: true,
              author,
            });
          case "edit": {
            const tokens = (plan?.content ?? "").match(/<\d+>/g) ?? ["<none>"];
            return app.plans.editPlan({
              taskId,
              expectedVersion: plan?.version,
              oldText: pick(tokens),
              newText: pick(["", "edited ✓", text()]),
              acknowledgeReduction: true,
              author,
            });
          }
          case "revert":
          case "restore": {
            const target = revisions.length > 0 ? pick(revisions) : undefined;
            if (!target) return undefined;
            if (kind === "revert") return app.plans.revertPlan({ taskId, revisionId: target.id });
            return app.plans.restorePlanRevision({
              taskId,
              revisionId: target.id,
              expectedVersion: plan?.version,
              expectedRevisionVersion: target.revisionVersion,
              author,
            });
          }
          case "delete":
            return app.plans.deletePlan({ taskId });
          case "mark":
            return app.plans.markImplementationStarted({ taskId, sessionId: `s-${step}`, actor: "ci" });
          default:
            // Lets the age rule catch up with this task's change rows.
            return new Promise((resolve) => setTimeout(resolve, 1_100));
        }
      };
      const outcome = await attempt().then(
        () => "ok",
        (error: { details?: string }) => `refused: ${error.details ?? String(error)}`,
      );
      log.push(`${step} ${kind}: ${outcome}`);
      if (outcome === "ok") kinds.add(kind);
      const figures = await compared(app, taskId);
      if (figures !== null) {
        expect({ step, kind, kept: figures.kept }).toEqual({ step, kind, kept: figures.counted });
        expect(figures.unrecorded).toBe(0);
      }
      // A task full of revisions (which never yield) refuses most writes: go on with a new one.
      if (outcome.includes("budget") && next() < 0.5) {
        await app.tasks.deleteTask({ taskId });
        kinds.add("task");
        taskId = await app.newTask();
      }
    }
    // The sequence really exercised every kind of write, and the budget refused some.
    const kindsMissing = ["append", "delete", "edit", "mark", "replace", "restore", "revert", "save", "task"];
    expect(kindsMissing.filter((k) => !kinds.has(k))).toEqual([]);
    expect(log.filter((line) => line.includes("budget")).length).toBeGreaterThan(0);
  }, 600_000);

  it("a HEAD whose figures are missing or were kept at another version is recounted by its next write", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan" });
    for (const fragment of ["one", "two", "three"])
      await app.plans.updatePlan({
        taskId,
        content: fragment,
        mode: APPEND,
        author: { kind: 1, name: fragment },
      });
    // As a replica of the previous release leaves them: never kept, or kept at an older version.
    await execSql(app.databaseUrl, "UPDATE task_plans SET history_bytes = NULL WHERE task_id = ?", [taskId]);
    await app.plans.updatePlan({ taskId, content: "four", mode: APPEND, author: { kind: 1, name: "four" } });
    let figures = await compared(app, taskId);
    expect(figures?.kept).toEqual(figures?.counted);
    await execSql(
      app.databaseUrl,
      "UPDATE task_plans SET history_bytes = 1, history_revisions = 1, version = version + 1 WHERE task_id = ?",
      [taskId],
    );
    const { plan } = await app.plans.getPlan({ taskId });
    await app.plans.updatePlan({
      taskId,
      content: "five",
      mode: REPLACE,
      expectedVersion: plan?.version,
      author: { kind: 1, name: "five" },
    });
    figures = await compared(app, taskId);
    expect(figures?.kept).toEqual(figures?.counted);
    expect(figures?.kept[0]).toBeGreaterThan(1);
  });

  it("kept figures that would refuse a write are recounted first: the write is judged on what the rows hold", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan" });
    await app.plans.updatePlan({ taskId, content: "one", mode: APPEND, author: { kind: 1, name: "one" } });
    // Kept at HEAD's own version, so trusted, but saying the task is at its revision budget (60).
    await execSql(app.databaseUrl, "UPDATE task_plans SET history_revisions = 60 WHERE task_id = ?", [
      taskId,
    ]);
    const written = await app.plans.updatePlan({
      taskId,
      content: "two",
      mode: APPEND,
      author: { kind: 1, name: "two" },
    });
    expect(written.revision).toMatchObject({ number: 3, coalesced: false });
    const figures = await compared(app, taskId);
    expect(figures?.kept).toEqual(figures?.counted);
    expect(figures?.kept[0]).toBe(3);
  });

  it("the migration computes the figures of existing tasks, in more than one batch", async () => {
    const tasks: string[] = [];
    for (let i = 0; i < 3; i++) {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: `# Plan ${i}` });
      await app.plans.updatePlan({ taskId, content: "more", mode: APPEND, author: { kind: 2, name: "u" } });
      tasks.push(taskId);
    }
    // 1,100 more tasks with a plan and no history, seeded in SQL (the batches are of 500).
    for (let from = 0; from < 1_100; from += 100) {
      const ids = Array.from({ length: 100 }, (_, i) => `seeded-${String(from + i).padStart(5, "0")}`);
      await execSql(
        app.databaseUrl,
        `INSERT INTO tasks (id, workspace_id, title, created_at) VALUES ${ids.map(() => "(?, 'ws-1', '', 0)").join(", ")}`,
        ids,
      );
      await execSql(
        app.databaseUrl,
        "INSERT INTO task_plans (task_id, title, content, content_bytes, content_chars, version, created_by," +
          ` created_at, updated_at, latest_revision_number, deleted) VALUES ${ids.map(() => "(?, 't', 'x', 1, 1, 1, 'agent', 0, 0, 0, 0)").join(", ")}`,
        ids,
      );
    }
    await execSql(
      app.databaseUrl,
      "UPDATE task_plans SET history_revisions = NULL, history_bytes = NULL, history_version = NULL",
    );
    const dataSource = createDataSource(app.databaseUrl, { poolSize: 1 });
    await dataSource.initialize();
    try {
      // The migrations after it first, then it.
      for (let i = 0; i < 4; i++) await dataSource.undoLastMigration({ transaction: "each" });
      expect(await runMigrations(dataSource, { lockWaitMs: 10_000 })).toEqual({
        applied: [
          "HistoryUsage1765100000000",
          "RevisionLocality1765200000000",
          "RevisionMergeMarker1765300000000",
          "ChecklistProgress1765400000000",
        ],
      });
    } finally {
      await dataSource.destroy();
    }
    for (const taskId of [...tasks, "seeded-00000", "seeded-01099"]) {
      const figures = await compared(app, taskId);
      expect({ taskId, kept: figures?.kept }).toEqual({ taskId, kept: figures?.counted });
    }
    const [unkept] = (await execSql(
      app.databaseUrl,
      "SELECT COUNT(*) AS n FROM task_plans WHERE history_version IS NULL",
    )) as { n: number | string }[];
    expect(Number(unkept?.n)).toBe(0);
  });
});
