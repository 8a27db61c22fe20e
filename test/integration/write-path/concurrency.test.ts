import { planState } from "../../harness/model/plan-state";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const WRITERS = 12;

describe.each(DATABASES)("concurrent writes to one task on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    // Window 0: every write adds a revision, so the history shows every committed write.
    app = await startTestApp(dialect, { env: { PLAN_COALESCE_WINDOW_MS: "0" } });
  });
  afterAll(() => app.stop());

  it("parallel editor saves from separate clients end gap-free, versions strictly increasing, HEAD = last commit", async () => {
    const taskId = await app.newTask();
    const clients = Array.from({ length: WRITERS }, () => app.client());
    const results = await Promise.all(
      clients.map((client, i) =>
        client.plans.savePlan({ taskId, content: `write ${i}\n`, author: { name: `editor-${i}` } }),
      ),
    );
    const versions = results.map((r) => r.plan?.version ?? 0).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: WRITERS }, (_, i) => i + 1));
    const numbers = results.map((r) => r.revision?.number ?? 0).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: WRITERS }, (_, i) => i + 1));
    const last = results.reduce((a, b) => ((a.plan?.version ?? 0) > (b.plan?.version ?? 0) ? a : b));
    const state = await planState(app.plans, taskId);
    const lastIndex = results.indexOf(last);
    expect(state.plan?.content).toBe(`write ${lastIndex}\n`);
    expect(state.plan?.version).toBe(WRITERS);
    // Each revision holds exactly what the write that created it sent, in commit order.
    expect(state.revisions.map((r) => r.revisionNumber)).toEqual(numbers.slice().reverse());
    for (const result of results) {
      const revision = (await app.plans.getPlanRevision({ taskId, revisionId: result.revision?.id }))
        .revision;
      expect(revision?.content).toBe(`write ${results.indexOf(result)}\n`);
    }
  });

  it("parallel saves and versioned agent replaces interleave into one serial history", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "start\n" });
    const clients = Array.from({ length: WRITERS }, () => app.client());
    // Agents replace with the version they read; only those whose read is still current may win.
    const outcomes = await Promise.all(
      clients.map(async (client, i) => {
        if (i % 2 === 0) {
          const written = await client.plans.savePlan({
            taskId,
            content: `save ${i}\n`,
            author: { name: `e${i}` },
          });
          return { ok: true, version: written.plan?.version ?? 0, content: `save ${i}\n` };
        }
        const read = (await client.plans.getPlan({ taskId })).plan;
        try {
          const written = await client.plans.updatePlan({
            taskId,
            content: `replace ${i}\n`,
            expectedVersion: read?.version,
          });
          return { ok: true, version: written.plan?.version ?? 0, content: `replace ${i}\n` };
        } catch (error) {
          expect((error as { code: number }).code).toBe(10); // ABORTED VERSION_MISMATCH
          return { ok: false, version: 0, content: "" };
        }
      }),
    );
    const committed = outcomes.filter((o) => o.ok).sort((a, b) => a.version - b.version);
    // Versions 2..n+1 exactly once each: no lost or duplicated commit.
    expect(committed.map((o) => o.version)).toEqual(committed.map((_, i) => i + 2));
    const state = await planState(app.plans, taskId);
    expect(state.plan?.content).toBe(committed.at(-1)?.content);
    expect(state.revisions).toHaveLength(committed.length + 1);
    expect(state.revisions.map((r) => r.revisionNumber)).toEqual(
      Array.from({ length: committed.length + 1 }, (_, i) => committed.length + 1 - i),
    );
  });
});
