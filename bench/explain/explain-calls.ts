import { WriteMode } from "@taskplans/client";
import { connect } from "../../test/harness/calls/rpc";

/** A statement's shape: its literals replaced, so that one EXPLAIN stands for every call of it. */
export const shapeOf = (sql: string) =>
  sql
    .replace(/'(?:[^'\\]|\\.)*'/g, "?")
    .replace(/\b\d+\b/g, "?")
    .replace(/\(\?(?:, \?)+\)/g, "(?...)")
    .replace(/(?:\(\?\.\.\.\)(?:, )?)+/g, "(?...)")
    .replace(/\s+/g, " ")
    .trim();

/** Statements EXPLAIN can read: reads, updates, deletes, and inserts whose values hold a subquery. */
export const EXPLAINABLE = /^\s*(SELECT|UPDATE|DELETE|INSERT INTO \S+ \([^)]*\) VALUES \(.*\(SELECT)/is;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls every RPC on a database seeded as bench:scale seeds it (`tasks` tasks `t-<n>` of 10
 * revisions and `deep-0` of 10,000), so that the service sends every statement it has: GetTask,
 * GetPlan, appends to a young task and to the deep task (which the default budget of 10,000
 * revisions refuses after a recount), a replace, an edit, an editor save, ListPlanRevisions pages,
 * GetPlanRevision, a revert, a restore, the implementation-started mark, CreateTask, CreatePlan, a
 * WatchPlan catching up with content, DeletePlan, DeleteTask; then waits for pruning passes.
 */
export async function exercise(port: number, tasks: number): Promise<void> {
  const client = connect(port);
  try {
    const young = `t-${Math.floor(tasks / 2)}`;
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
    await client.tasks.deleteTask({ taskId: `t-${Math.floor(tasks / 3)}` });
    await sleep(2_000); // pruning passes by age and per task
  } finally {
    client.close();
  }
}
