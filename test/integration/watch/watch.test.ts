import { AuthorKind, WriteMode } from "@taskplans/contract";
import { type PlanChange, PlanChangeKind } from "@taskplans/contract";
import { connect, rpcError } from "../../harness/calls/rpc";
import { startStallProxy } from "../../harness/network/stall-proxy";
import { execSql } from "../../harness/databases/sql";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";
import { Watcher } from "../../harness/calls/watcher";

const K = PlanChangeKind;
const APPEND = WriteMode.WRITE_MODE_APPEND;

/** Every kind of write once, with what each must produce; returns the versions written. */
async function everyKindOfWrite(app: TestApp, taskId: string): Promise<void> {
  await app.plans.createPlan({ taskId, content: "# Plan\n\nfirst" }); // v1 CREATED
  await app.plans.updatePlan({ taskId, content: "# Plan\n\nsecond", expectedVersion: 1 }); // v2
  await app.plans.updatePlan({ taskId, content: "more", mode: APPEND }); // v3
  await app.plans.editPlan({ taskId, oldText: "more", newText: "extra", expectedVersion: 3 }); // v4
  await app.plans.savePlan({ taskId, content: "# Plan\n\nby a person" }); // v5
  const revisions = (await app.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions;
  const first = revisions[revisions.length - 1];
  await app.plans.revertPlan({ taskId, revisionId: first?.id }); // v6 REVERTED
  const source = (await app.plans.getPlanRevision({ taskId, revisionId: revisions[0]?.id })).revision;
  await app.plans.restorePlanRevision({
    taskId,
    revisionId: source?.id,
    expectedVersion: 6,
    expectedRevisionVersion: source?.revisionVersion,
  }); // v7 REVERTED
  await app.plans.markImplementationStarted({ taskId, sessionId: "session-1", actor: "ci" }); // v7 mark
  await app.plans.markImplementationStarted({ taskId, sessionId: "session-2", actor: "ci" }); // nothing
  // Rejected writes and an already-current restore produce nothing.
  await rpcError(app.plans.updatePlan({ taskId, content: "stale", expectedVersion: 1 }));
  await rpcError(app.plans.updatePlan({ taskId, content: "   ", mode: APPEND }));
  const current = (await app.plans.getPlanRevision({ taskId, revisionId: source?.id })).revision;
  await app.plans.restorePlanRevision({
    taskId,
    revisionId: source?.id,
    expectedVersion: 7,
    expectedRevisionVersion: current?.revisionVersion,
  });
  await app.plans.deletePlan({ taskId }); // v8 DELETED
}

const EXPECTED_KINDS = [
  [K.PLAN_CHANGE_KIND_CREATED, 1],
  [K.PLAN_CHANGE_KIND_UPDATED, 2],
  [K.PLAN_CHANGE_KIND_UPDATED, 3],
  [K.PLAN_CHANGE_KIND_UPDATED, 4],
  [K.PLAN_CHANGE_KIND_UPDATED, 5],
  [K.PLAN_CHANGE_KIND_REVERTED, 6],
  [K.PLAN_CHANGE_KIND_REVERTED, 7],
  [K.PLAN_CHANGE_KIND_IMPLEMENTATION_STARTED, 7],
  [K.PLAN_CHANGE_KIND_DELETED, 8],
];

const kinds = (changes: readonly PlanChange[]) => changes.map((c) => [c.kind, c.plan?.version]);

describe.each(DATABASES)("WatchPlan on $label", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    // No coalescing, so that every write has its own revision to check against.
    app = await startTestApp(dialect, { env: { PLAN_COALESCE_WINDOW_MS: "0" } });
  });
  afterAll(() => app.stop());

  it("starts with a snapshot, then streams one change per committed write of every kind, and nothing for rejected ones", async () => {
    const taskId = await app.newTask();
    const watcher = new Watcher(app.plans.watchPlan({ taskId, includeContent: true }));
    const [snapshot] = await watcher.received(1);
    expect(snapshot?.kind).toBe(K.PLAN_CHANGE_KIND_SNAPSHOT);
    expect(snapshot?.plan).toBeUndefined();
    await everyKindOfWrite(app, taskId);
    const changes = (await watcher.received(1 + EXPECTED_KINDS.length)).slice(1);
    expect(kinds(changes)).toEqual(EXPECTED_KINDS);
    // Each content write's change carries the revision it wrote, as the history lists it.
    const listed = (await app.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions.reverse();
    const written = changes.filter((c) => c.revision !== undefined);
    expect(written.map((c) => [c.revision?.id, c.revision?.number])).toEqual(
      listed.map((r) => [r.id, r.revisionNumber]),
    );
    for (const [i, change] of written.entries()) {
      const revision = (await app.plans.getPlanRevision({ taskId, revisionId: change.revision?.id }))
        .revision;
      expect(change.plan?.content).toBe(revision?.content);
      expect(change.plan?.contentBytes).toBe(revision?.contentBytes);
      expect(change.revision?.coalesced).toBe(false);
      // Save (4) and revert (5) are the editor's; the restore (6) is an agent's.
      expect(change.author?.kind).toBe(
        i === 4 || i === 5 ? AuthorKind.AUTHOR_KIND_USER : AuthorKind.AUTHOR_KIND_AGENT,
      );
    }
    const mark = changes[7];
    expect(mark?.plan?.implementationStartedSessionId).toBe("session-1");
    expect(mark?.plan?.content).toBe(changes[6]?.plan?.content);
    expect(changes[8]?.plan?.content).toBe("");
    // Nothing more arrives for the rejected writes: the next write is the next message.
    await app.plans.createPlan({ taskId, content: "again" });
    const [next] = (await watcher.received(2 + EXPECTED_KINDS.length)).slice(-1);
    expect([next?.kind, next?.plan?.version]).toEqual([K.PLAN_CHANGE_KIND_CREATED, 9]);
    watcher.cancel();
  });

  it("without include_content plans carry sizes only; the snapshot is the current plan", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "twelve chars" });
    const watcher = new Watcher(app.plans.watchPlan({ taskId }));
    // The snapshot first: an append that commits before the watch reads its snapshot is in it.
    await watcher.received(1);
    await app.plans.updatePlan({ taskId, content: "tail", mode: APPEND });
    const [snapshot, appended] = await watcher.received(2);
    expect(snapshot).toMatchObject({
      kind: K.PLAN_CHANGE_KIND_SNAPSHOT,
      plan: { version: 1, content: "", contentChars: 12 },
    });
    expect(appended).toMatchObject({
      kind: K.PLAN_CHANGE_KIND_UPDATED,
      plan: { version: 2, content: "", contentChars: 18 },
    });
    watcher.cancel();
  });

  it("an append and the replace that commits the same content produce equal changes (AC-TASKS-PLAN-APPEND-005.4)", async () => {
    const [a, b] = [await app.newTask(), await app.newTask()];
    await app.plans.createPlan({ taskId: a, content: "base" });
    await app.plans.createPlan({ taskId: b, content: "base" });
    const [wa, wb] = [a, b].map(
      (taskId) => new Watcher(app.plans.watchPlan({ taskId, afterVersion: 1, includeContent: true })),
    );
    await app.plans.updatePlan({ taskId: a, content: "added", mode: APPEND });
    await app.plans.updatePlan({ taskId: b, content: "base\n\nadded", expectedVersion: 1 });
    const [ca, cb] = [(await wa!.received(1))[0], (await wb!.received(1))[0]];
    const comparable = (c: PlanChange | undefined) => ({
      kind: c?.kind,
      author: c?.author,
      plan: { ...c?.plan, taskId: "", createdAt: undefined, updatedAt: undefined },
      revision: { number: c?.revision?.number, coalesced: c?.revision?.coalesced },
    });
    expect(comparable(ca)).toEqual(comparable(cb));
    expect(ca?.plan?.content).toBe("base\n\nadded");
    wa!.cancel();
    wb!.cancel();
  });

  it("a resume after version V streams exactly the tail of the full sequence, without V's implementation mark", async () => {
    const taskId = await app.newTask();
    const full = new Watcher(app.plans.watchPlan({ taskId, includeContent: true }));
    await full.received(1);
    await everyKindOfWrite(app, taskId);
    const all = (await full.received(1 + EXPECTED_KINDS.length)).slice(1);
    for (const after of [0, 3, 6, 7]) {
      const resumed = new Watcher(app.plans.watchPlan({ taskId, afterVersion: after, includeContent: true }));
      const tail = all.filter((c) => (c.plan?.version ?? 0) > after);
      expect(await resumed.received(tail.length)).toEqual(tail);
      resumed.cancel();
    }
    // Resuming at the newest version waits for live changes.
    const live = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 8 }));
    await app.plans.createPlan({ taskId, content: "live" });
    expect(kinds(await live.received(1))).toEqual([[K.PLAN_CHANGE_KIND_CREATED, 9]]);
    full.cancel();
    live.cancel();
  });

  it("a snapshot taken between a write and its implementation mark is followed by the mark", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "x" });
    const watcher = new Watcher(app.plans.watchPlan({ taskId }));
    await watcher.received(1);
    await app.plans.markImplementationStarted({ taskId, sessionId: "s", actor: "a" });
    expect(kinds(await watcher.received(2))).toEqual([
      [K.PLAN_CHANGE_KIND_SNAPSHOT, 1],
      [K.PLAN_CHANGE_KIND_IMPLEMENTATION_STARTED, 1],
    ]);
    watcher.cancel();
  });

  it("a missing task is NOT_FOUND TASK_NOT_FOUND; a resume point ahead of the plan is OUT_OF_RANGE WATCH_HISTORY_EXPIRED", async () => {
    const missing = new Watcher(app.plans.watchPlan({ taskId: "no-such-task" }));
    expect(await missing.ended()).toMatchObject({ code: 5, reason: "TASK_NOT_FOUND" });
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "x" });
    const ahead = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 5 }));
    const end = await ahead.ended();
    expect(end).toMatchObject({ code: 11, reason: "WATCH_HISTORY_EXPIRED" });
    expect(end.metadata.next_action).toMatch(/GetPlan/);
    expect(ahead.changes).toEqual([]);
  });

  it("a deleted task ends its streams with NOT_FOUND TASK_NOT_FOUND", async () => {
    const taskId = await app.newTask();
    const watcher = new Watcher(app.plans.watchPlan({ taskId }));
    await watcher.received(1);
    await app.tasks.deleteTask({ taskId });
    expect(await watcher.ended()).toMatchObject({ code: 5, reason: "TASK_NOT_FOUND" });
  });

  it("an append's change row holds no copy, and every version's content comes back exactly, before and after later writes", async () => {
    const taskId = await app.newTask();
    const contents: string[] = [];
    const write = async (run: () => Promise<unknown>) => {
      await run();
      contents.push((await app.plans.getPlan({ taskId })).plan?.content ?? "");
    };
    const append = (content: string) => write(() => app.plans.updatePlan({ taskId, content, mode: APPEND }));
    await write(() => app.plans.createPlan({ taskId, content: "# Plan \u00a0\n" })); // v1
    await append("\n\n- one 😀\n"); // v2
    await append("  - two\u3000\r\n"); // v3
    await app.plans.markImplementationStarted({ taskId, sessionId: "s", actor: "ci" }); // v3 mark
    contents.push(contents.at(-1) ?? "");
    await append("é three \n\n"); // v4
    await append("four"); // v5
    const live = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 5, includeContent: true }));
    await append("five\n"); // v6: read live, from HEAD
    expect((await live.received(1))[0]?.plan?.content).toBe(contents.at(-1));
    const copies = () =>
      execSql(
        app.databaseUrl,
        "SELECT version, step FROM task_plan_changes WHERE task_id = ? AND content IS NOT NULL ORDER BY version, step",
        [taskId],
      );
    // Only the create and the mark hold a copy; the appends are prefixes of what follows.
    expect(await copies()).toEqual([
      { version: 1, step: 0 },
      { version: 3, step: 1 },
    ]);
    const resume = async (after: number) => {
      const watcher = new Watcher(app.plans.watchPlan({ taskId, afterVersion: after, includeContent: true }));
      const changes = await watcher.received(contents.length - after - (after < 3 ? 0 : 1));
      watcher.cancel();
      return changes.map((c) => c.plan?.content);
    };
    const fromStart = await resume(0);
    expect(fromStart).toEqual(contents);
    await write(() => app.plans.updatePlan({ taskId, content: "replaced", expectedVersion: 6 })); // v7
    await append("after the replace"); // v8
    // The replace first gave version 6's row a copy of the content it replaced.
    expect(await copies()).toEqual([
      { version: 1, step: 0 },
      { version: 3, step: 1 },
      { version: 6, step: 0 },
      { version: 7, step: 0 },
    ]);
    expect(await resume(0)).toEqual(contents);
    expect(await resume(4)).toEqual(contents.slice(5));
    live.cancel();
  });

  it("a change whose content cannot be given any more (what it derives from was pruned) ends WATCH_HISTORY_EXPIRED", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "start" });
    await app.plans.updatePlan({ taskId, content: "a", mode: APPEND }); // v2
    await app.plans.updatePlan({ taskId, content: "b", mode: APPEND }); // v3
    await app.plans.updatePlan({ taskId, content: "c", mode: APPEND }); // v4
    // A hole as pruning by age on skewed clocks could leave it: version 3 gone, 2 and 4 kept.
    await execSql(app.databaseUrl, "DELETE FROM task_plan_changes WHERE task_id = ? AND version = 3", [
      taskId,
    ]);
    const watcher = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 1, includeContent: true }));
    expect(await watcher.ended()).toMatchObject({ code: 11, reason: "WATCH_HISTORY_EXPIRED" });
    expect(watcher.changes).toEqual([]);
    // Without content, the changes up to the hole are still given.
    const sizes = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 1 }));
    expect(await sizes.ended()).toMatchObject({ code: 11, reason: "WATCH_HISTORY_EXPIRED" });
    expect(sizes.changes.map((c) => c.plan?.version)).toEqual([2]);
  });

  it("a client that reads resumes 400 versions back to the end, with and without content: a catch-up goes at its pace and never ends WATCH_TOO_SLOW", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan\n" });
    for (let i = 2; i <= 401; i++) await app.plans.updatePlan({ taskId, content: `- ${i}`, mode: APPEND });
    for (const includeContent of [false, true]) {
      const head = (await app.plans.getPlan({ taskId, limit: 1 })).plan?.version ?? 0;
      const watcher = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 1, includeContent }));
      await watcher.received(head - 1, 60_000);
      await app.plans.updatePlan({ taskId, content: "- live", mode: APPEND });
      await watcher.received(head);
      expect(watcher.end).toBeNull();
      expect(watcher.versions()).toEqual(Array.from({ length: head }, (_, i) => i + 2));
      if (includeContent) expect(watcher.changes[399]?.plan?.content).toMatch(/\n- 401$/);
      watcher.cancel();
    }
  }, 120_000);

  it("honours the call deadline", async () => {
    const taskId = await app.newTask();
    const watcher = new Watcher(app.plans.watchPlan({ taskId }, { timeoutMs: 500 }));
    expect((await watcher.ended()).code).toBe(4);
    expect(watcher.changes.map((c) => c.kind)).toEqual([K.PLAN_CHANGE_KIND_SNAPSHOT]);
  });
});

/**
 * A content watch of a new task through a proxy that then stalls: the watcher has received the
 * task's second version, and from now on reads nothing until `proxy.flow()`.
 */
async function stalledContentWatch(app: TestApp) {
  const proxy = await startStallProxy(app.port);
  const watching = connect(proxy.port);
  const taskId = await app.newTask();
  await app.plans.createPlan({ taskId, content: "x" });
  const watcher = new Watcher(watching.plans.watchPlan({ taskId, afterVersion: 1, includeContent: true }));
  await app.plans.savePlan({ taskId, content: "first" });
  await watcher.received(1);
  proxy.stall();
  return { proxy, watching, taskId, watcher };
}

describe("WatchPlan retention, slow clients and draining (SQLite)", () => {
  it("a resume from before the retained history is OUT_OF_RANGE WATCH_HISTORY_EXPIRED with a resume hint", async () => {
    const app = await startTestApp("sqlite", {
      env: {
        PLAN_CHANGES_MAX_VERSIONS: "3",
        PLAN_CHANGES_PRUNE_INTERVAL_MS: "100",
        PLAN_COALESCE_WINDOW_MS: "0",
      },
    });
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "v1" });
      for (let v = 2; v <= 6; v++)
        await app.plans.updatePlan({ taskId, content: `v${v}`, expectedVersion: v - 1 });
      // Pruned to the newest 3 versions (4, 5, 6): a resume after 3 still works, after 2 does not.
      const oldest = async () => {
        const w = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 2 }));
        const end = await Promise.race([w.ended(), w.received(4).then(() => null)]);
        w.cancel();
        return end;
      };
      let expired = await oldest();
      for (let i = 0; expired === null && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expired = await oldest();
      }
      expect(expired).toMatchObject({ code: 11, reason: "WATCH_HISTORY_EXPIRED" });
      const ok = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 3 }));
      expect((await ok.received(3)).map((c) => c.plan?.version)).toEqual([4, 5, 6]);
      ok.cancel();
    } finally {
      await app.stop();
    }
  });

  it("changes older than PLAN_CHANGES_MAX_AGE_MS are pruned; a resume from before them is WATCH_HISTORY_EXPIRED", async () => {
    let now = Date.parse("2026-11-30T10:00:00Z");
    const app = await startTestApp("sqlite", {
      env: {
        PLAN_CHANGES_MAX_AGE_MS: "60000",
        PLAN_CHANGES_MAX_VERSIONS: "0",
        PLAN_CHANGES_PRUNE_INTERVAL_MS: "100",
        PLAN_COALESCE_WINDOW_MS: "0",
      },
      overrides: { clock: () => new Date(now) },
    });
    try {
      const taskId = await app.newTask();
      await app.plans.createPlan({ taskId, content: "v1" });
      await app.plans.updatePlan({ taskId, content: "v2", expectedVersion: 1 });
      now += 120_000; // two minutes later: versions 1 and 2 are past the age limit
      await app.plans.updatePlan({ taskId, content: "v3", expectedVersion: 2 });
      const resumeAfter = async (version: number) => {
        const w = new Watcher(app.plans.watchPlan({ taskId, afterVersion: version }));
        const end = await Promise.race([w.ended(), w.received(3 - version).then(() => null)]);
        w.cancel();
        return end;
      };
      let expired = await resumeAfter(0);
      for (let i = 0; expired === null && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expired = await resumeAfter(0);
      }
      expect(expired).toMatchObject({ code: 11, reason: "WATCH_HISTORY_EXPIRED" });
      expect(await resumeAfter(1)).toMatchObject({ code: 11, reason: "WATCH_HISTORY_EXPIRED" });
      const ok = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 2 }));
      expect((await ok.received(1)).map((c) => c.plan?.version)).toEqual([3]);
      ok.cancel();
    } finally {
      await app.stop();
    }
  });

  it("a client that does not read ends RESOURCE_EXHAUSTED WATCH_TOO_SLOW after what was queued; writers are not held up", async () => {
    const app = await startTestApp("sqlite", { env: { PLAN_WATCH_STREAM_BUFFER: "4" } });
    const { proxy, watching, taskId, watcher } = await stalledContentWatch(app);
    try {
      // Enough to fill the socket buffers between the server and the stalled reader, then the stream's.
      const big = "y".repeat(250_000);
      let version = 2;
      while (watcher.end === null && version < 400) {
        version += 1;
        await app.plans.savePlan({ taskId, content: `${version}${big}` });
        if (version % 20 === 0) await app.plans.getPlan({ taskId, limit: 1 }); // the server is not held up
      }
      proxy.flow();
      const end = await watcher.ended();
      expect([end.code, end.reason]).toEqual([8, "WATCH_TOO_SLOW"]);
      const versions = watcher.versions();
      expect(versions).toEqual(versions.map((_, i) => i + 2));
      expect(versions.length).toBeLessThan(version - 1);
      expect(Number(end.metadata.resume_after_version)).toBe(versions[versions.length - 1]);
      expect((await app.plans.getPlan({ taskId })).plan?.version).toBe(version);
    } finally {
      watching.close();
      await proxy.close();
      await app.stop();
    }
  });

  it("a stream past its byte bound ends WATCH_TOO_SLOW and frees its queue at once, while its client still reads nothing", async () => {
    const app = await startTestApp("sqlite", {
      env: { PLAN_WATCH_STREAM_BUFFER_BYTES: String(1024 * 1024) },
    });
    const { proxy, watching, taskId, watcher } = await stalledContentWatch(app);
    const metric = async (line: string) => {
      const body = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
      return Number(
        body
          .split("\n")
          .find((l) => l.startsWith(`${line} `))
          ?.split(" ")[1] ?? 0,
      );
    };
    const cut = 'taskplans_rejections_total{reason="WATCH_TOO_SLOW"}';
    const queued = 'taskplans_watch_buffer_bytes{state="queued"}';
    try {
      const big = "y".repeat(250_000);
      let version = 2;
      let peak = 0;
      while ((await metric(cut)) === 0 && version < 200) {
        version += 1;
        await app.plans.savePlan({ taskId, content: `${version}${big}` });
        peak = Math.max(peak, await metric(queued));
      }
      // Cut by bytes (four plans queued), long before the 256 messages of PLAN_WATCH_STREAM_BUFFER.
      expect(await metric(cut)).toBe(1);
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(1024 * 1024);
      expect(await metric(queued)).toBe(0);
      proxy.flow();
      const end = await watcher.ended();
      expect([end.code, end.reason]).toEqual([8, "WATCH_TOO_SLOW"]);
      const versions = watcher.versions();
      expect(versions).toEqual(versions.map((_, i) => i + 2));
      expect(Number(end.metadata.resume_after_version)).toBe(versions[versions.length - 1]);
      expect(version).toBeLessThan(100);
    } finally {
      watching.close();
      await proxy.close();
      await app.stop();
    }
  });

  it("stopping a replica ends its streams UNAVAILABLE WATCH_DRAINING with the version to resume after", async () => {
    const app = await startTestApp("sqlite");
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "x" });
    const watcher = new Watcher(app.plans.watchPlan({ taskId }));
    await watcher.received(1);
    const stopping = app.stop();
    const end = await watcher.ended();
    await stopping;
    expect([end.code, end.reason, end.metadata.resume_after_version]).toEqual([14, "WATCH_DRAINING", "1"]);
  });
});
