import { curl } from "../../harness/calls/curl";
import { Watcher } from "../../harness/calls/watcher";
import { execSql } from "../../harness/databases/sql";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";
import { checklistProgress } from "../../../src/plans/rules/checklist-progress";

// Issue 56 item 3: a plan's checklist progress, counted when the plan is written, on every answer
// that carries the plan's metadata, through both replicas of a shared database. Each figure is
// compared with the count of the stored content by the console's rules (checklistProgress).
const PLAN = "# P\n\n- [x] a\n- [ ] b\n- [ ] c\n";
const person = { kind: 2, name: "Ada" };

describe.each(DATABASES)("checklist progress, on $label", ({ dialect }) => {
  let one: TestApp;
  let two: TestApp; // another replica of the same database (the same one on SQLite)
  let nodes: RedisNode[] = [];

  beforeAll(async () => {
    // The default coalescing window: an agent's writes in a row rewrite its revision in place, whose
    // checklist (and the row version it was counted at) must follow.
    const env: Record<string, string> = {};
    if (dialect === "mysql") {
      nodes = await startRedisNodes(3);
      env.PLAN_REDIS_URLS = nodes.map((n) => n.url).join(",");
      one = await startTestApp(dialect, { env });
      two = await startTestApp(dialect, { env: { ...env, PLAN_DATABASE_URL: one.databaseUrl } });
    } else {
      one = await startTestApp(dialect, { env });
      two = one;
    }
  }, 600_000);
  afterAll(async () => {
    if (two !== one) await two?.stop();
    await one?.stop();
    for (const node of nodes) await node.stop();
  });

  // The stored plan's progress as GetPlan answers it, and the count of its content.
  async function progressOf(taskId: string) {
    const { plan } = await one.plans.getPlan({ taskId });
    return { stored: plan?.checklist, counted: checklistProgress(plan?.content ?? "") };
  }

  it("is on the write's answer, GetPlan, GetTask, ListTasks and each revision, and follows each write", async () => {
    const taskId = await one.newTask();
    const created = await one.plans.createPlan({ taskId, content: PLAN });
    expect(created.plan?.checklist).toEqual({ checked: 1, total: 3 });
    const ticked = await two.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] b",
      newText: "- [x] b",
      author: person,
    });
    expect(ticked.plan?.checklist).toEqual({ checked: 2, total: 3 });
    expect(await progressOf(taskId)).toEqual({
      stored: { checked: 2, total: 3 },
      counted: { checked: 2, total: 3 },
    });
    expect((await two.tasks.getTask({ taskId })).task?.checklist).toEqual({ checked: 2, total: 3 });
    const listed = await two.tasks.listTasks({ pageSize: 1000 });
    expect(listed.tasks.find((t) => t.taskId === taskId)?.checklist).toEqual({ checked: 2, total: 3 });
    const { revisions } = await one.plans.listPlanRevisions({ taskId });
    expect(revisions.map((r) => r.checklist)).toEqual([
      { checked: 2, total: 3 },
      { checked: 1, total: 3 },
    ]);
  });

  it("a task without a plan, or whose plan was deleted, lists none; a plan without boxes counts 0 of 0", async () => {
    const bare = await one.newTask();
    const plain = (await one.planWith("# Notes\n\nNo boxes here.\n")).taskId;
    const gone = (await one.planWith(PLAN)).taskId;
    await one.plans.deletePlan({ taskId: gone });
    const { tasks } = await two.tasks.listTasks({ pageSize: 1000 });
    const of = (id: string) => tasks.find((t) => t.taskId === id);
    expect([of(bare)?.checklist, of(plain)?.checklist, of(gone)?.checklist]).toEqual([
      undefined,
      { checked: 0, total: 0 },
      undefined,
    ]);
    expect(of(bare)).toBeDefined();
    expect(of(gone)).toBeDefined();
  });

  it.each([
    ["an item after items", PLAN, "- [x] d\n", { checked: 2, total: 4 }],
    [
      "an item into an open fence, which takes it in",
      "- [x] a\n\n```\n- [ ] code\n",
      "- [x] d\n",
      { checked: 1, total: 1 },
    ],
    [
      "an indented item, which nests in the last one",
      "- [x] a\n",
      "    - [ ] nested\n",
      { checked: 1, total: 2 },
    ],
    ["an item after a closed fence", "```\n- [ ] code\n```\n", "- [x] d\n", { checked: 1, total: 1 }],
    [
      "the end of an open <pre>, then an item",
      "<pre>\n- [ ] raw\n",
      "</pre>\n\n- [x] after\n",
      { checked: 1, total: 1 },
    ],
  ])("an append (%s) counts as the whole result does", async (_name, content, fragment, expected) => {
    const { taskId } = await one.planWith(content);
    const appended = await two.plans.updatePlan({ taskId, content: fragment, mode: 2 });
    expect(appended.plan?.checklist).toEqual(expected);
    expect(await progressOf(taskId)).toEqual({ stored: expected, counted: expected });
    // The agent's append coalesced into its create's revision, which was rewritten with its figure.
    expect(appended.revision?.coalesced).toBe(true);
    const { revisions } = await one.plans.listPlanRevisions({ taskId });
    expect(revisions.map((r) => r.checklist)).toEqual([expected]);
  });

  it("a large plan is counted (off the event loop) as the console counts it", async () => {
    const items = Array.from({ length: 6_000 }, (_, i) => `- [${i % 4 === 0 ? "x" : " "}] step ${i}`);
    const { taskId } = await one.planWith(`# Big\n\n${items.join("\n")}\n`);
    expect(await progressOf(taskId)).toEqual({
      stored: { checked: 1_500, total: 6_000 },
      counted: { checked: 1_500, total: 6_000 },
    });
  });

  it("a watch's changes carry it", async () => {
    const { taskId } = await one.planWith(PLAN);
    const watcher = new Watcher(two.plans.watchPlan({ taskId }));
    try {
      await watcher.received(1);
      await one.plans.editPlan({ taskId, expectedVersion: 1, oldText: "- [ ] c", newText: "- [x] c" });
      const [snapshot, change] = await watcher.received(2);
      expect([snapshot?.plan?.checklist, change?.plan?.checklist]).toEqual([
        { checked: 1, total: 3 },
        { checked: 2, total: 3 },
      ]);
    } finally {
      watcher.cancel();
    }
  });

  it("the HTTP door answers it in GetPlan's JSON", async () => {
    const { taskId } = await one.planWith(PLAN);
    const answer = await curl([
      "-X",
      "POST",
      "-H",
      "Content-Type: application/json",
      "--data-binary",
      JSON.stringify({ taskId }),
      `http://127.0.0.1:${two.httpPort}/taskplans.v1.PlanService/GetPlan`,
    ]);
    expect(answer.status).toBe(200);
    expect((answer.json as { plan: { checklist: unknown } }).plan.checklist).toEqual({
      checked: "1",
      total: "3",
    });
  });

  it("a plan a replica of the previous release wrote (which leaves the checklist as it was) shows none", async () => {
    const { taskId } = await one.planWith(PLAN);
    // What such a replica's write does to the rows: new content and version, the checklist untouched.
    const ticked = PLAN.replace("- [ ] b", "- [x] b");
    await execSql(
      one.databaseUrl,
      "UPDATE task_plans SET content = ?, version = version + 1 WHERE task_id = ?",
      [ticked, taskId],
    );
    await execSql(
      one.databaseUrl,
      "UPDATE task_plan_revisions SET row_version = row_version + 1 WHERE task_id = ?",
      [taskId],
    );
    expect((await progressOf(taskId)).stored).toBeUndefined();
    expect((await two.tasks.getTask({ taskId })).task?.checklist).toBeUndefined();
    const [revision] = (await one.plans.listPlanRevisions({ taskId })).revisions;
    expect(revision?.checklist).toBeUndefined();
    const written = await two.plans.editPlan({
      taskId,
      expectedVersion: 2,
      oldText: "- [ ] c",
      newText: "- [x] c",
    });
    expect(written.plan?.checklist).toEqual({ checked: 3, total: 3 });
  });

  it("a plan written before it was counted shows none, and its next write counts it, an append included", async () => {
    const { taskId } = await one.planWith(PLAN);
    const forget =
      "UPDATE task_plans SET checklist_checked = NULL, checklist_total = NULL, checklist_open_end = NULL";
    await execSql(one.databaseUrl, `${forget} WHERE task_id = ?`, [taskId]);
    expect((await progressOf(taskId)).stored).toBeUndefined();
    expect((await two.tasks.getTask({ taskId })).task?.checklist).toBeUndefined();
    const appended = await two.plans.updatePlan({ taskId, content: "- [x] d\n", mode: 2 });
    expect(appended.plan?.checklist).toEqual({ checked: 2, total: 4 });
    expect(await progressOf(taskId)).toEqual({
      stored: { checked: 2, total: 4 },
      counted: { checked: 2, total: 4 },
    });
  });
});
