import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { execSql } from "../../harness/databases/sql";
import { Watcher } from "../../harness/calls/watcher";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = 2;

describe.each(DATABASES)("the per-task history budget, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: { PLAN_HISTORY_MAX_REVISIONS: "4", PLAN_HISTORY_MAX_BYTES: "3000", PLAN_COALESCE_WINDOW_MS: "0" },
    });
  });
  afterAll(() => app.stop());

  it("a write past the revision budget is RESOURCE_EXHAUSTED HISTORY_QUOTA_EXCEEDED with the limit, and changes nothing", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan" });
    for (const step of ["a", "b", "c"]) await app.plans.updatePlan({ taskId, content: step, mode: APPEND });
    const before = await planState(app.plans, taskId);
    expect(before.revisions).toHaveLength(4);
    const failure = await rpcError(app.plans.updatePlan({ taskId, content: "d", mode: APPEND }));
    expect([failure.code, failure.reason]).toEqual([8, "HISTORY_QUOTA_EXCEEDED"]);
    expect(failure.metadata).toMatchObject({ limit: "revisions", limit_revisions: "4", used_revisions: "4" });
    expect(failure.message).toMatch(
      /^Plan was not changed because the task's history would exceed its budget of 4 revisions/,
    );
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("reverts count against the byte budget (exempt from the size limit, not from the budget)", async () => {
    const taskId = await app.newTask();
    // 1,000 bytes in the revision and 1,000 in the change history (WatchPlan's copy).
    const first = await app.plans.savePlan({ taskId, content: "x".repeat(1_000) });
    await app.plans.savePlan({ taskId, content: "short" }); // 2,010 in all
    const before = await planState(app.plans, taskId);
    const failure = await rpcError(app.plans.revertPlan({ taskId, revisionId: first.revision?.id }));
    expect([failure.code, failure.reason]).toEqual([8, "HISTORY_QUOTA_EXCEEDED"]);
    expect(failure.metadata).toMatchObject({ limit: "bytes", limit_bytes: "3000", used_bytes: "2010" });
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("the change history yields to the budget: coalesced saves go on, the oldest changes go", async () => {
    const budgeted = await startTestApp(dialect, { env: { PLAN_HISTORY_MAX_BYTES: "100000" } });
    try {
      const taskId = await budgeted.newTask();
      // One coalesced revision, and a full copy in the change history per save.
      for (let i = 0; i < 12; i++)
        await budgeted.plans.savePlan({ taskId, content: `${i}`.padEnd(20_000, "x") });
      const { plan } = await budgeted.plans.getPlan({ taskId });
      expect([plan?.version, plan?.latestRevisionNumber]).toEqual([12, 1]);
      const [row] = (await execSql(
        budgeted.databaseUrl,
        "SELECT COUNT(*) AS n, MIN(version) AS oldest FROM task_plan_changes WHERE task_id = ?",
        [taskId],
      )) as { n: number | string; oldest: number | string }[];
      // 20,000 in the revision, so four of the twelve copies fit: versions 9 to 12.
      expect([Number(row?.n), Number(row?.oldest)]).toEqual([4, 9]);
      const expired = new Watcher(budgeted.plans.watchPlan({ taskId, afterVersion: 5 }));
      expect(await expired.ended()).toMatchObject({ code: 11, reason: "WATCH_HISTORY_EXPIRED" });
      const resumed = new Watcher(
        budgeted.plans.watchPlan({ taskId, afterVersion: 8, includeContent: true }),
      );
      expect((await resumed.received(4)).map((c) => c.plan?.content.slice(0, 2))).toEqual([
        "8x",
        "9x",
        "10",
        "11",
      ]);
      resumed.cancel();
    } finally {
      await budgeted.stop();
    }
  });

  it("the budget holds what the database stores: revisions and change history together", async () => {
    const budgeted = await startTestApp(dialect, {
      env: { PLAN_HISTORY_MAX_BYTES: String(2 * 1024 * 1024), PLAN_COALESCE_WINDOW_MS: "0" },
    });
    try {
      const taskId = await budgeted.newTask();
      const plan = `# Plan\n${"a 200 KiB plan line\n".repeat(10_240)}`; // 204,807 bytes
      const first = await budgeted.plans.savePlan({ taskId, content: plan });
      await budgeted.plans.updatePlan({ taskId, content: "## more", mode: APPEND });
      let reverts = 0;
      let failure = null;
      while (failure === null && reverts < 40) {
        failure = await budgeted.plans.revertPlan({ taskId, revisionId: first.revision?.id }).then(
          () => null,
          (error: unknown) => rpcError(Promise.reject(error)),
        );
        if (failure === null) reverts += 1;
      }
      expect(failure?.reason).toBe("HISTORY_QUOTA_EXCEEDED");
      // The database's own measure of every stored copy of the task's text.
      const stored = async (sql: string) =>
        Number(
          ((await execSql(budgeted.databaseUrl, sql, [taskId])) as { n: number | string | null }[])[0]?.n ??
            0,
        );
      const length = dialect === "mysql" ? "OCTET_LENGTH" : "length";
      const text = (column: string) =>
        `COALESCE(${length}(CAST(${column} AS ${dialect === "mysql" ? "BINARY" : "BLOB"})), 0)`;
      const revisions = await stored(
        `SELECT SUM(${text("content")}) AS n FROM task_plan_revisions WHERE task_id = ?`,
      );
      const changes = await stored(
        `SELECT SUM(${text("content")} + ${text("content_tail")}) AS n FROM task_plan_changes WHERE task_id = ?`,
      );
      expect(revisions + changes).toBeLessThanOrEqual(2 * 1024 * 1024);
      // And the budget is used, not merely refused early: one more copy of the plan would not fit.
      expect(revisions + changes + 2 * plan.length).toBeGreaterThan(2 * 1024 * 1024);
      expect(reverts).toBeGreaterThan(0);
    } finally {
      await budgeted.stop();
    }
  });
});
