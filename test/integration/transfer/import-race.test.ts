import {
  type ExportedHead,
  type ExportedRevision,
  ImportOutcome,
  type ImportTaskRequest,
  type PlanChange,
  PlanChangeKind,
  WriteMode,
} from "@taskplans/contract";
import { InProcessTaskLock } from "../../../src/locking/in-process-task-lock";
import { composeAppend } from "../../../src/plans/rules/compose";
import type { LockLease, TaskLock } from "../../../src/plans/ports/task-lock";
import { type Clients, rpcError } from "../../harness/calls/rpc";
import { Watcher } from "../../harness/calls/watcher";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

// Issue 54, defect 7 (follow-up): ImportTask runs in the task's serialized region, like every other
// write (WritePipeline.exclusive: the task's lock, then the commit listeners). Many appends race
// several overwriting imports of the same task, each a whole consistent task with a known plan at a
// version of its own (some lower than the task's: an import starts the history again). Afterwards:
// every write held the task's lock, one at a time; the commit listeners heard every commit, in
// commit order (the versions of each run, the first plan's or an import's, follow one another, each
// an acknowledged append, and every import is there); the stored plan is, byte for byte, the last
// import's plan followed by exactly the appends acknowledged after it, each once; the revision count
// matches; and a watcher open throughout received the runs in commit order, each from its start
// with the content each append produced, every import at most once, and the standing run whole. An
// import replaces the task's change history, so a run that a later import replaced before the
// watcher read it is not sent (docs/watch.md); the IMPORTED change that follows says so.
// Checked to fail with WritePipeline.exclusive bypassed (no lock, no listeners: lock holds and the
// listeners' imports missing) and with only its lock skipped (lock holds missing).

const APPENDERS = 6;
const MAX_APPENDS = 14; // per appender while the imports run; then FINAL_APPENDS more each
const FINAL_APPENDS = 2;
// Import k's plan is at version GAP * (k + 1): fewer than GAP appends in all keep every version
// inside the run of the import (or of the first plan) that precedes it.
const GAP = 100;
// Each import is launched once so many appends were acknowledged: imports race the appends and,
// launched close together, each other; their versions go down as well as up.
const LAUNCHES: readonly { readonly afterAppends: number; readonly k: number }[] = [
  { afterAppends: 8, k: 3 },
  { afterAppends: 9, k: 0 },
  { afterAppends: 24, k: 4 },
  { afterAppends: 24, k: 1 },
  { afterAppends: 27, k: 2 },
];
const IMPORTS = LAUNCHES.length;
const RETRIABLE = new Set(["LOCK_UNAVAILABLE", "WRITE_CONFLICT"]);

const importVersion = (k: number) => GAP * (k + 1);
const importContent = (k: number) => `# Imported plan ${k}\n\nThe plan as import ${k} brings it.\n`;
// Each fragment is delimited, so that no fragment is a substring of another.
const fragmentOf = (appender: number, n: number) => `- <append ${appender}.${n}>\n`;

const chars = (text: string) => [...text].length;
const bytes = (text: string) => Buffer.byteLength(text, "utf8");

/** Import k: the task as it is, with one revision holding import k's plan at import k's version. */
function importRequests(taskId: string, k: number): Partial<ImportTaskRequest>[] {
  const at = new Date(Date.UTC(2026, 0, 1 + k));
  const content = importContent(k);
  const sizes = { contentBytes: bytes(content), contentChars: chars(content) };
  const revision = {
    id: `${taskId.slice(-12)}-i${k}`,
    taskId,
    revisionNumber: 1,
    title: `Import ${k}`,
    content,
    ...sizes,
    authorKind: 1,
    authorName: `importer ${k}`,
    createdAt: at,
    updatedAt: at,
    revisionVersion: "",
    merge: undefined,
  } as unknown as ExportedRevision["revision"];
  const head = {
    plan: {
      taskId,
      title: `Import ${k}`,
      content,
      ...sizes,
      version: importVersion(k),
      createdBy: "agent",
      createdAt: at,
      updatedAt: at,
      latestRevisionNumber: 1,
    },
    deleted: false,
  } as unknown as ExportedHead;
  return [
    {
      start: {
        task: { taskId, workspaceId: "ws-1", title: "a task", createdAt: at },
        head,
        revisionCount: 1,
        overwrite: true,
        dryRun: false,
      },
    },
    { revisions: { revisions: [{ revision, rowVersion: 1 }] } },
  ];
}

/** The replica's task lock, counting who holds one task's lock and whether two ever held it at once. */
class CountingLock implements TaskLock {
  private readonly inner = new InProcessTaskLock();
  taskId = "";
  holds = 0;
  private holding = 0;
  overlapped = false;

  withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T> {
    return this.inner.withLock(taskId, waitMs, async (lease) => {
      if (taskId !== this.taskId) return work(lease);
      this.holds++;
      if (++this.holding > 1) this.overlapped = true;
      try {
        return await work(lease);
      } finally {
        this.holding--;
      }
    });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Acked {
  readonly appender: number;
  readonly fragment: string;
  readonly version: number;
  /** Whether it was sent after every import had been answered. */
  readonly afterImports: boolean;
}

describe.each(DATABASES)("appends racing overwriting imports of one task ($label)", ({ dialect }) => {
  let app: TestApp;
  const lock = new CountingLock();
  beforeAll(async () => {
    // One revision per append (no coalescing), so that the revision count is exact.
    app = await startTestApp(dialect, { env: { PLAN_COALESCE_WINDOW_MS: "0" }, overrides: { lock } });
  });
  afterAll(async () => {
    await app.stop();
  });

  it("keeps the last import and exactly the appends after it; listeners and a watcher hear each commit once, in order", async () => {
    const taskId = await app.newTask();
    const first = "# First plan\n";
    await app.plans.createPlan({ taskId, content: first });
    const watcher = new Watcher(app.plans.watchPlan({ taskId, includeContent: true }));
    await watcher.received(1);
    lock.taskId = taskId;

    const acked: Acked[] = [];
    const refused: { fragment: string; reason: string }[] = [];
    let importsAnswered = false;
    const importsLaunched: Promise<void>[] = [];
    const imports: { k: number; outcome: ImportOutcome; attempts: number }[] = [];
    const importErrors: unknown[] = [];
    const runImport = async (k: number) => {
      const client = app.client();
      for (let attempt = 1; ; attempt++) {
        try {
          const { outcome } = await client.tasks.importTask(importRequests(taskId, k), { timeoutMs: 60_000 });
          imports.push({ k, outcome, attempts: attempt });
          break;
        } catch (error) {
          const failure = await rpcError(Promise.reject(error));
          if (!RETRIABLE.has(failure.reason) || attempt >= 20) {
            importErrors.push(failure);
            break;
          }
        }
      }
      if (imports.length + importErrors.length === IMPORTS) importsAnswered = true;
    };
    const launched = new Set<number>();
    const launchDue = () => {
      for (const { afterAppends, k } of LAUNCHES) {
        if (launched.has(k) || acked.length < afterAppends) continue;
        launched.add(k);
        importsLaunched.push(runImport(k));
      }
    };
    const append = async (client: Clients, appender: number, n: number) => {
      const fragment = fragmentOf(appender, n);
      const afterImports = importsAnswered;
      try {
        const { plan } = await client.plans.updatePlan({
          taskId,
          content: fragment,
          mode: WriteMode.WRITE_MODE_APPEND,
        });
        acked.push({ appender, fragment, version: plan?.version ?? -1, afterImports });
      } catch (error) {
        const failure = await rpcError(Promise.reject(error));
        refused.push({ fragment, reason: failure.reason });
      }
      launchDue();
    };
    const clients = Array.from({ length: APPENDERS }, () => app.client());
    // Every appender appends in turn until the imports were all answered (at most MAX_APPENDS),
    // then FINAL_APPENDS more: appends follow the last import for certain.
    await Promise.all(
      clients.map(async (client, appender) => {
        for (let n = 0; n < MAX_APPENDS && !importsAnswered; n++) await append(client, appender, n);
      }),
    );
    launchDue();
    await Promise.all(importsLaunched);
    expect(importErrors).toEqual([]);
    await Promise.all(
      clients.map(async (client, appender) => {
        for (let n = MAX_APPENDS; n < MAX_APPENDS + FINAL_APPENDS; n++) await append(client, appender, n);
      }),
    );

    // Every import wrote (each brings a plan no other holds); a write of the task waits for the
    // lock, so no append is refused for an import (nor an import for an append).
    expect(imports.map((i) => i.outcome).sort()).toEqual(
      Array.from({ length: IMPORTS }, () => ImportOutcome.IMPORT_OUTCOME_OVERWRITTEN),
    );
    expect(refused).toEqual([]);
    expect(imports.filter((i) => i.attempts > 1)).toEqual([]);
    // Each of them held the task's lock, one at a time.
    expect([lock.holds, lock.overlapped]).toEqual([acked.length + IMPORTS, false]);

    // The stored plan, then the watcher up to it: in order, so once it has the stored version it
    // has every change before it.
    const { plan } = await app.plans.getPlan({ taskId });
    const stored = { version: plan?.version ?? -1, content: plan?.content ?? "" };
    await waitFor(watcher, stored.version, stored.content);
    watcher.cancel();
    const changes = watcher.changes.slice(1);

    // What committed, in commit order: the commit listeners' plan events (an append's plan event,
    // and an import's). Each run (the first plan's, then each import's) holds the versions after its
    // start one by one, each an acknowledged append (none lost, none twice), and every import has one.
    const ackedAt = new Map(acked.map((a) => [a.version, a]));
    expect(ackedAt.size).toBe(acked.length);
    const order = app.events
      .eventsFor(taskId)
      .flatMap((event) => ("plan" in event && event.type !== "plan.created" ? [event.plan.version] : []));
    const committed = runsOfVersions(order);
    expect(
      committed
        .slice(1)
        .map((run) => run.start / GAP - 1)
        .sort(),
    ).toEqual([...Array(IMPORTS).keys()]);
    for (const run of committed) expect(run.versions).toEqual(run.versions.map((_, i) => run.start + i + 1));
    expect(committed.flatMap((run) => run.versions).sort((x, y) => x - y)).toEqual(
      acked.map((a) => a.version).sort((x, y) => x - y),
    );
    const runStart = (version: number) => (version < GAP ? 1 : Math.floor(version / GAP) * GAP);

    // The watcher's history, run by run. An import replaces the task's change history: the watch
    // receives the import that stands when it reads (and what follows it), never one twice, and
    // of each run it receives the versions from its start, in order, with the content each wrote.
    const runs = runsOf(first, changes);
    const seenImports = runs.slice(1).map((run) => run.imported);
    expect(new Set(seenImports).size).toBe(seenImports.length);
    // The runs it saw come in commit order, each seen from its start (a prefix of what committed).
    let at = 0;
    for (const run of runs) {
      while (at < committed.length && committed[at]!.start !== run.version) at++;
      expect(at).toBeLessThan(committed.length);
      const seen = run.changes.map((c) => c.plan?.version);
      expect(seen).toEqual(committed[at]!.versions.slice(0, seen.length));
    }
    let expectedContent = "";
    for (const run of runs) {
      let content = run.content;
      run.changes.forEach((change, i) => {
        // Versions follow one another from the run's start, with one revision each.
        expect([change.kind, change.plan?.version, change.revision?.number]).toEqual([
          PlanChangeKind.PLAN_CHANGE_KIND_UPDATED,
          run.version + i + 1,
          run.revisions + i + 1,
        ]);
        const append = ackedAt.get(run.version + i + 1);
        expect(append).toBeDefined();
        content = composeAppend(content, append!.fragment);
        expect(change.plan?.content).toBe(content);
      });
      expectedContent = content;
    }

    // The run that stands is the last import's: the watcher has every append acknowledged in it,
    // and the stored plan is its plan and those appends, byte for byte, each once.
    const last = runs[runs.length - 1]!;
    const standing = committed[committed.length - 1]!;
    expect([last.imported >= 0, last.version]).toEqual([true, standing.start]);
    expect(last.changes.map((c) => c.plan?.version)).toEqual(standing.versions);
    expect(stored.content).toBe(expectedContent);
    expect(stored.version).toBe(last.version + last.changes.length);
    const after = new Set(last.changes.map((c) => ackedAt.get(c.plan!.version)!.fragment));
    for (const a of acked) {
      const occurrences = stored.content.split(a.fragment).length - 1;
      expect([a.fragment, occurrences]).toEqual([a.fragment, after.has(a.fragment) ? 1 : 0]);
    }
    // The appends sent once every import had answered are all in it.
    for (const a of acked.filter((x) => x.afterImports)) expect(after.has(a.fragment)).toBe(true);
    // Each appender's appends, in the runs the watcher saw: a later one has a higher version in the
    // same run, or is in a later run.
    const runOf = (version: number) => runs.findIndex((run) => run.version === runStart(version));
    for (let appender = 0; appender < APPENDERS; appender++) {
      const own = acked.filter((a) => a.appender === appender);
      for (let i = 1; i < own.length; i++) {
        const [a, b] = [own[i - 1]!, own[i]!];
        const [ra, rb] = [runOf(a.version), runOf(b.version)];
        if (ra >= 0 && rb >= 0) expect(rb > ra || (rb === ra && b.version > a.version)).toBe(true);
      }
    }
    // The revisions: the import's one and one per append after it.
    const revisions = await app.plans.listPlanRevisions({ taskId, pageSize: 100 });
    expect([revisions.revisions.length, plan?.latestRevisionNumber]).toEqual([
      1 + last.changes.length,
      1 + last.changes.length,
    ]);
  }, 180_000);
});

interface Run {
  /** Which import started it (-1: the first plan). */
  readonly imported: number;
  readonly version: number;
  readonly revisions: number;
  readonly content: string;
  readonly changes: PlanChange[];
  readonly versions: Set<number>;
}

// Splits the committed versions into runs: each import's version (a multiple of GAP) starts one.
function runsOfVersions(order: readonly number[]): { start: number; versions: number[] }[] {
  const runs = [{ start: 1, versions: [] as number[] }];
  for (const version of order)
    if (version % GAP === 0) runs.push({ start: version, versions: [] });
    else runs[runs.length - 1]!.versions.push(version);
  return runs;
}

// Splits the watched changes at each IMPORTED change, checking that the change is an import's plan.
function runsOf(first: string, changes: readonly PlanChange[]): Run[] {
  const runs: Run[] = [
    { imported: -1, version: 1, revisions: 1, content: first, changes: [], versions: new Set() },
  ];
  for (const change of changes) {
    const version = change.plan?.version ?? -1;
    if (change.kind === PlanChangeKind.PLAN_CHANGE_KIND_IMPORTED) {
      const k = version / GAP - 1;
      expect([Number.isInteger(k), change.plan?.content, change.revision?.number]).toEqual([
        true,
        importContent(k),
        1,
      ]);
      runs.push({
        imported: k,
        version,
        revisions: 1,
        content: importContent(k),
        changes: [],
        versions: new Set(),
      });
    } else {
      const run = runs[runs.length - 1]!;
      run.changes.push(change);
      run.versions.add(version);
    }
  }
  return runs;
}

// Waits until the watcher received the stored version with the stored content (a hang guard: the
// failure shows what it received).
async function waitFor(watcher: Watcher, version: number, content: string): Promise<void> {
  for (let seen = 1; ; seen = watcher.changes.length + 1) {
    await watcher.received(seen, 30_000);
    const last = watcher.changes[watcher.changes.length - 1];
    if (last?.plan?.version === version && last.plan.content === content) return;
  }
}

// Issue 54, defect 7 (follow-up): an import of a task without a plan (only the task record, or a
// plan deleted at its tombstone's version), over a task whose plan a watcher follows. The watcher is
// told, with PLAN_CHANGE_KIND_IMPORTED and no plan (never silence, never the replaced plan), its
// stream goes on, and the next plan written reaches it.
describe.each(DATABASES)("an import of a task without a plan, watched ($label)", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect);
  });
  afterAll(async () => {
    await app.stop();
  });

  /** `source`'s export, as the task `taskId` (its revisions' ids made its own). */
  async function exportAs(source: string, taskId: string): Promise<Partial<ImportTaskRequest>[]> {
    const page = await app.tasks.exportTask({ taskId: source });
    const head = page.head && { ...page.head, plan: { ...page.head.plan!, taskId } };
    const revisions = page.revisions.map((r, i) => ({
      ...r,
      revision: { ...r.revision!, taskId, id: `${taskId.slice(-12)}-${i}` },
    }));
    const task = { ...page.task!, taskId };
    return [
      { start: { task, head, revisionCount: page.revisionCount, overwrite: true, dryRun: false } },
      { revisions: { revisions } },
    ];
  }

  /** A task with a plan at version 3, and its watchers: with content, without, and resumed after 1. */
  async function watchedTask() {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Mine\n" });
    for (let i = 0; i < 2; i++)
      await app.plans.updatePlan({ taskId, content: `- ${i}\n`, mode: WriteMode.WRITE_MODE_APPEND });
    const watchers = [
      new Watcher(app.plans.watchPlan({ taskId, includeContent: true })),
      new Watcher(app.plans.watchPlan({ taskId })),
      new Watcher(app.plans.watchPlan({ taskId, afterVersion: 1 })),
    ];
    for (const [i, w] of watchers.entries()) await w.received(i === 2 ? 2 : 1);
    // The nth message each watcher receives next.
    const next = async (n: number) =>
      Promise.all(
        watchers.map(async (w, i) => (await w.received((i === 2 ? 2 : 1) + n))[(i === 2 ? 1 : 0) + n]),
      );
    return { taskId, watchers, next };
  }

  const kindAndPlan = (change: PlanChange | undefined) => [change?.kind, change?.plan];

  it("tells a watcher of an overwritten task that the imported task has no plan; the next plan follows", async () => {
    const { taskId, watchers, next } = await watchedTask();
    const bare = await app.newTask(); // a task record only
    const imported = await app.tasks.importTask(await exportAs(bare, taskId));
    expect(imported.outcome).toBe(ImportOutcome.IMPORT_OUTCOME_OVERWRITTEN);
    for (const change of await next(1))
      expect(kindAndPlan(change)).toEqual([PlanChangeKind.PLAN_CHANGE_KIND_IMPORTED, undefined]);
    expect((await rpcError(app.plans.getPlan({ taskId }))).reason).toBe("PLAN_NOT_FOUND");
    expect(app.events.typesFor(taskId).at(-1)).toBe("plan.deleted");
    // The streams go on: the plan created next (version 1: the task has no HEAD) reaches each.
    await app.plans.createPlan({ taskId, content: "# Again\n" });
    for (const change of await next(2))
      expect([change?.kind, change?.plan?.version]).toEqual([PlanChangeKind.PLAN_CHANGE_KIND_CREATED, 1]);
    expect(watchers[0]!.changes.at(-1)?.plan?.content).toBe("# Again\n");
    // A watch started afterwards: a snapshot of the new plan; one resumed after 0 gets its creation.
    const resumed = new Watcher(app.plans.watchPlan({ taskId, afterVersion: 0 }));
    const [first] = await resumed.received(1);
    expect([first?.kind, first?.plan?.version]).toEqual([PlanChangeKind.PLAN_CHANGE_KIND_CREATED, 1]);
    for (const w of [...watchers, resumed]) w.cancel();
  });

  it("tells a watcher when the imported plan is deleted (a tombstone), never the replaced plan", async () => {
    const { taskId, watchers, next } = await watchedTask();
    const source = await app.planWith("# Gone\n");
    for (let i = 0; i < 4; i++)
      await app.plans.updatePlan({
        taskId: source.taskId,
        content: `- ${i}\n`,
        mode: WriteMode.WRITE_MODE_APPEND,
      });
    await app.plans.deletePlan({ taskId: source.taskId });
    const imported = await app.tasks.importTask(await exportAs(source.taskId, taskId));
    expect(imported.outcome).toBe(ImportOutcome.IMPORT_OUTCOME_OVERWRITTEN);
    for (const change of await next(1))
      expect(kindAndPlan(change)).toEqual([PlanChangeKind.PLAN_CHANGE_KIND_IMPORTED, undefined]);
    // The plan recreated over the tombstone (version 6) follows on every stream.
    await app.plans.createPlan({ taskId, content: "# Back\n" });
    for (const change of await next(2))
      expect([change?.kind, change?.plan?.version]).toEqual([PlanChangeKind.PLAN_CHANGE_KIND_CREATED, 7]);
    for (const w of watchers) w.cancel();
  });
});

/** The task lock with a release that takes a while (as Redlock's does: a round trip to Redis). */
class SlowReleaseLock implements TaskLock {
  private readonly inner = new InProcessTaskLock();
  constructor(private readonly releaseMs: number) {}

  async withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const done = await this.inner.withLock(taskId, waitMs, work);
    await new Promise((resolve) => setTimeout(resolve, this.releaseMs));
    return done;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

// An import's notification can reach a replica's watchers after they read the import from the
// history themselves: its own replica tells its watchers once the lock is released (a Redis round
// trip with Redlock), another replica hears it over Redis, and meanwhile the poll, or a read for
// another notification, may have delivered it. The late notification must not send it again.
describe.each(DATABASES)("a late notification of an import, watched ($label)", ({ dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: { PLAN_WATCH_POLL_INTERVAL_MS: "100" },
      overrides: { lock: new SlowReleaseLock(600) },
    });
  });
  afterAll(async () => {
    await app.stop();
  });

  it("does not repeat the import or what followed it to a watch that already has them", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Mine\n" });
    const watchers = [
      new Watcher(app.plans.watchPlan({ taskId, includeContent: true })),
      new Watcher(app.plans.watchPlan({ taskId })),
    ];
    for (const w of watchers) await w.received(1);
    // The poll delivers the import (version 100, above the task's) while its lock is being released.
    await app.tasks.importTask(importRequests(taskId, 0));
    await app.plans.updatePlan({ taskId, content: "- after\n", mode: WriteMode.WRITE_MODE_APPEND });
    // One more write: anything sent again would come before it.
    await app.plans.updatePlan({ taskId, content: "- last\n", mode: WriteMode.WRITE_MODE_APPEND });
    for (const w of watchers) {
      await w.received(4);
      expect(w.changes.slice(0, 4).map((c) => [c.kind, c.plan?.version])).toEqual([
        [PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT, 1],
        [PlanChangeKind.PLAN_CHANGE_KIND_IMPORTED, 100],
        [PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, 101],
        [PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, 102],
      ]);
      w.cancel();
    }
  }, 60_000);
});
