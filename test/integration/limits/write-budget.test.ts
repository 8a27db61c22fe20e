import { SignJWT } from "jose";
import { statusDetailsOf } from "@taskplans/client";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { DATABASES, randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// Issue 40: the history budget bounds a task, not a caller. One subject stored 267 MB in 12.7 s with
// ~90-byte RevertPlan calls spread over four tasks; the write budget bounds what one caller stores
// per window, whichever tasks it writes.
const SECRET = "write-budget-secret-0123456789-0123456789";
const token = (subject: string) =>
  new SignJWT({ kind: "user", name: subject, workspaces: ["ws-1"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(subject)
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(SECRET));

// A save of 5,000 bytes stores 10,000: the revision and the change history's copy (WatchPlan's).
const TEXT = "x".repeat(5_000);

/** The wait a refusal's google.rpc.RetryInfo asks for, in ms (null when it has none). */
async function retryDelayOf(call: Promise<unknown>): Promise<number | null> {
  try {
    await call;
  } catch (error) {
    const delay = statusDetailsOf(error)?.retryInfo?.retryDelay;
    return delay ? delay.seconds * 1000 + delay.nanos / 1e6 : null;
  }
  throw new Error("expected the call to fail");
}

describe.each(DATABASES)("the per-caller write budget, on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: {
        PLAN_AUTH_JWT_SECRET: SECRET,
        PLAN_WRITE_BUDGET_BYTES: "15000",
        PLAN_WRITE_BUDGET_WINDOW_MS: "60000",
        PLAN_COALESCE_WINDOW_MS: "0",
      },
    });
  });
  afterAll(() => app.stop());

  async function tasksOf(subject: string, count: number) {
    const client = app.client(await token(subject));
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const taskId = randomId(subject);
      await client.tasks.createTask({ taskId, workspaceId: "ws-1" });
      ids.push(taskId);
    }
    return { client, ids };
  }

  it("once a caller's writes stored its budget, across tasks, a ~90-byte RevertPlan is RESOURCE_EXHAUSTED WRITE_BUDGET_EXCEEDED and changes nothing", async () => {
    const { client: alice, ids } = await tasksOf("alice", 2);
    const [first = "", second = ""] = ids;
    const saved = await alice.plans.savePlan({ taskId: first, content: TEXT }); // 10,000 bytes
    await alice.plans.savePlan({ taskId: first, content: "short" }); // 10 more
    // Each task is far below its history budget; the caller is past its own.
    await alice.plans.savePlan({ taskId: second, content: TEXT });
    const before = await planState(alice.plans, first);
    const revert = { taskId: first, revisionId: saved.revision?.id ?? "" };
    const failure = await rpcError(alice.plans.revertPlan(revert));
    expect([failure.code, failure.reason]).toEqual([8, "WRITE_BUDGET_EXCEEDED"]);
    expect(failure.message).toMatch(
      /^Plan was not changed because your writes stored more than 15000 bytes of plan text in 60000 ms\. Wait \d+ ms/,
    );
    expect(failure.metadata).toMatchObject({ limit_bytes: "15000", window_ms: "60000" });
    expect(failure.metadata.next_action).toMatch(/google\.rpc\.RetryInfo/);
    // The retry is worth making only once bytes leave the window: most of its 60 s is left.
    const retryAfter = Number(failure.metadata.retry_after_ms);
    expect(retryAfter).toBeGreaterThan(50_000);
    expect(retryAfter).toBeLessThanOrEqual(60_000);
    const delay = await retryDelayOf(alice.plans.revertPlan(revert));
    expect(delay).toBeGreaterThan(50_000);
    expect(delay).toBeLessThanOrEqual(60_000);
    // Nothing changed: plan, version, revisions (reads are never refused by the budget).
    const after = await planState(alice.plans, first);
    expect(after).toEqual(before);
    expect([after.plan?.version, after.revisions.length]).toEqual([2, 2]);
    // Every content write is held to it, on any task.
    for (const refused of [
      alice.plans.savePlan({ taskId: second, content: "a" }),
      alice.plans.updatePlan({ taskId: second, content: "b", mode: 2 }),
      alice.plans.createPlan({ taskId: randomId("never"), content: "c" }),
    ])
      expect((await rpcError(refused)).reason).toBe("WRITE_BUDGET_EXCEEDED");
  });

  it("counts per caller: another subject writes the same task; a caller over its budget may still delete", async () => {
    const { client: carol, ids } = await tasksOf("carol", 1);
    const [taskId = ""] = ids;
    const saved = await carol.plans.savePlan({ taskId, content: TEXT });
    await carol.plans.savePlan({ taskId, content: TEXT + "y" });
    expect((await rpcError(carol.plans.revertPlan({ taskId, revisionId: saved.revision?.id }))).reason).toBe(
      "WRITE_BUDGET_EXCEEDED",
    );
    const dave = app.client(await token("dave"));
    const reverted = await dave.plans.revertPlan({ taskId, revisionId: saved.revision?.id });
    expect(reverted.plan?.version).toBe(3);
    // Deleting is how a caller recovers: never refused by the budget.
    await carol.plans.deletePlan({ taskId });
    await carol.tasks.deleteTask({ taskId });
  });

  it("counts what was stored, not what was sent: /metrics shows the stored bytes and the refusals", async () => {
    const scrape = async () =>
      (await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text())
        .split("\n")
        .filter((line) =>
          /^taskplans_(stored_bytes_total|rejections_total\{reason="WRITE_BUDGET)/.test(line),
        );
    const figure = (lines: string[], name: string) =>
      Number(lines.find((line) => line.startsWith(name))?.split(" ")[1] ?? 0);
    const { client: erin, ids } = await tasksOf("erin", 1);
    const [taskId = ""] = ids;
    const saved = await erin.plans.savePlan({ taskId, content: TEXT });
    await erin.plans.savePlan({ taskId, content: "z" });
    const before = await scrape();
    // A 90-byte revert stores the whole 5,000-byte text twice (revision and change copy).
    await erin.plans.revertPlan({ taskId, revisionId: saved.revision?.id });
    const after = await scrape();
    expect(
      figure(after, "taskplans_stored_bytes_total") - figure(before, "taskplans_stored_bytes_total"),
    ).toBe(10_000);
    await rpcError(erin.plans.revertPlan({ taskId, revisionId: saved.revision?.id }));
    const refused = await scrape();
    expect(
      figure(refused, 'taskplans_rejections_total{reason="WRITE_BUDGET_EXCEEDED"}') -
        figure(after, 'taskplans_rejections_total{reason="WRITE_BUDGET_EXCEEDED"}'),
    ).toBe(1);
    // The implementation-started mark is not refused by the budget (it is set once per plan), and
    // what it stores is counted: its change row's copy of the 5,000-byte plan.
    const marked = await erin.plans.markImplementationStarted({ taskId, sessionId: "s-1" });
    expect(marked.plan?.implementationStartedBy).toBe("erin");
    const afterMark = await scrape();
    expect(
      figure(afterMark, "taskplans_stored_bytes_total") - figure(refused, "taskplans_stored_bytes_total"),
    ).toBe(5_000);
  });

  it("bytes leave the window: after the RetryInfo delay the caller writes again", async () => {
    const windowed = await startTestApp(dialect, {
      env: {
        PLAN_AUTH_JWT_SECRET: SECRET,
        PLAN_WRITE_BUDGET_BYTES: "15000",
        PLAN_WRITE_BUDGET_WINDOW_MS: "1500",
      },
    });
    try {
      const frank = windowed.client(await token("frank"));
      const taskId = randomId("frank");
      await frank.tasks.createTask({ taskId, workspaceId: "ws-1" });
      await frank.plans.savePlan({ taskId, content: TEXT });
      await frank.plans.savePlan({ taskId, content: TEXT + "y" });
      const refused = rpcError(frank.plans.savePlan({ taskId, content: "z" }));
      const { reason, metadata } = await refused;
      expect(reason).toBe("WRITE_BUDGET_EXCEEDED");
      const wait = Number(metadata.retry_after_ms);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(1_500 + 1_500 / 20); // the window, plus at most one bucket
      await new Promise((resolve) => setTimeout(resolve, wait + 50));
      expect((await frank.plans.savePlan({ taskId, content: "z" })).plan?.version).toBe(3);
    } finally {
      await windowed.stop();
    }
  });
});
