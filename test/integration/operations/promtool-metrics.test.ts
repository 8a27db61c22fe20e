import { es, WriteMode } from "@taskplans/contract";
import type { Clients } from "../../harness/calls/rpc";
import { connectOverHttp } from "../../harness/calls/connect-clients";
import { runToExit } from "../../harness/servers/processes";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// `promtool check metrics` (Prometheus's own linter, Debian's prometheus package that npm test
// installs) on the /metrics of a replica that has served every RPC of both services, over gRPC and
// over Connect: every series the service exports once it has been used, as Prometheus reads it.
// docs/testing.md "Reference clients".

/** Every RPC of both services, once, on `clients` (writes that succeed; reads of what they wrote). */
async function everyUnaryRpc(clients: Clients): Promise<void> {
  // A refusal first: the code label takes a value other than OK.
  await clients.plans.getPlan({ taskId: randomId("missing") }).catch(() => undefined);
  const taskId = randomId("task");
  await clients.tasks.createTask({ taskId, workspaceId: "ws-1", title: "promtool" });
  await clients.tasks.getTask({ taskId });
  await clients.tasks.listTasks({ workspaceId: "ws-1" });
  const first = await clients.plans.createPlan({ taskId, content: "# one\n" });
  await clients.plans.getPlan({ taskId });
  await clients.plans.updatePlan({ taskId, content: "- two\n", mode: WriteMode.WRITE_MODE_APPEND });
  const edited = await clients.plans.editPlan({
    taskId,
    expectedVersion: 2,
    oldText: "two",
    newText: "three",
  });
  const revisions = await clients.plans.listPlanRevisions({ taskId });
  const firstId = first.revision?.id ?? "";
  const lastId = revisions.revisions[0]?.id ?? "";
  await clients.plans.getPlanRevision({ taskId, revisionId: firstId });
  await clients.plans.diffPlanRevisions({ taskId, fromRevisionId: firstId, toRevisionId: lastId });
  await clients.plans.getPlanChanges({ taskId, sinceVersion: 1 });
  const head = await clients.plans.getPlanRevision({ taskId, revisionId: firstId });
  await clients.plans.restorePlanRevision({
    taskId,
    revisionId: firstId,
    expectedVersion: edited.plan?.version,
    expectedRevisionVersion: head.revision?.revisionVersion ?? "",
  });
  await clients.plans.revertPlan({ taskId, revisionId: lastId });
  await clients.plans.markImplementationStarted({ taskId, sessionId: "s-1", actor: "promtool" });
  await clients.plans.savePlan({ taskId, content: "# saved\n" });
  const exported = await clients.tasks.exportTask({ taskId });
  await clients.plans.deletePlan({ taskId });
  await clients.tasks.deleteTask({ taskId });
  // (The Connect clients of the harness have no ImportTask: that stream runs over gRPC here.)
  if (typeof clients.tasks.importTask !== "function") return;
  await clients.tasks.importTask([
    { start: { task: exported.task, head: exported.head, revisionCount: exported.revisionCount } },
    { revisions: { revisions: exported.revisions } },
  ]);
}

/** A WatchPlan stream that got its snapshot, then was cancelled by the client. */
async function oneWatch(app: TestApp): Promise<void> {
  const { taskId } = await app.planWith("# watched\n");
  const stream = app.plans.watchPlan({ taskId });
  await new Promise<void>((resolve, reject) => {
    stream.once("data", () => resolve());
    stream.once("error", reject);
  });
  stream.on("error", () => undefined);
  stream.cancel();
}

describe("promtool check metrics", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp("sqlite");
  });
  afterAll(() => app.stop());

  it("finds no problem in /metrics after every RPC of both services was served over gRPC and Connect", async () => {
    const overConnect = connectOverHttp(app.httpPort);
    try {
      await everyUnaryRpc(app);
      await everyUnaryRpc(overConnect);
    } finally {
      overConnect.close();
    }
    await oneWatch(app);
    const text = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();

    const served = new Set(
      [...text.matchAll(/^taskplans_rpc_duration_seconds_count\{method="([^"]+)"/gm)].map((m) => m[1]),
    );
    const methods = [...es.PlanService.methods, ...es.TaskService.methods].map((m) => m.name);
    expect(methods.filter((name) => ![...served].some((label) => label?.endsWith(name)))).toEqual([]);

    const checked = await runToExit(["promtool", "check", "metrics"], { timeoutMs: 30_000, input: text });
    expect((checked.stdout + checked.stderr).trim()).toBe("");
    expect(checked.code).toBe(0);
  });
});
