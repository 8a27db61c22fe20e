import pino from "pino";
import { ChangePruner, type PruneBounds, type PruneOutcome } from "../../../src/watch/change-pruner";
import type { PlanCommit } from "../../../src/plans/ports/records";

// A change history of `old` rows past the age limit and per-task rows, answering synchronously as
// better-sqlite3 does (a resolved promise): only an explicit yield lets a timer run in between.
class MemoryHistory {
  statements: string[] = [];
  constructor(
    public old: number,
    public perTask: Map<string, number> = new Map(),
  ) {}

  async pruneChangesBefore(_olderThan: Date, limit: number): Promise<number> {
    this.statements.push("age");
    const rows = Math.min(limit, this.old);
    this.old -= rows;
    return rows;
  }

  upTo = new Map<string, number>();
  async pruneTaskChanges(taskId: string, upToVersion: number, limit: number): Promise<number> {
    this.statements.push(`task ${taskId}`);
    this.upTo.set(taskId, upToVersion);
    const rows = Math.min(limit, this.perTask.get(taskId) ?? 0);
    this.perTask.set(taskId, (this.perTask.get(taskId) ?? 0) - rows);
    return rows;
  }
}

const silent = pino({ level: "silent" });
const retention = { maxAgeMs: 1_000, maxVersions: 10, intervalMs: 60_000 };
const bounds = (over: Partial<PruneBounds> = {}): PruneBounds => ({
  batch: 100,
  maxAgeStatements: 1_000,
  maxTaskStatements: 1_000,
  maxPassMs: 60_000,
  restRatio: 0,
  ...over,
});
// A commit that recorded a change of `version` (null: a task delete, which records none).
const commit = (version: number | null) =>
  (version === null
    ? { kind: "delete-task", taskId: "t", plan: null }
    : { kind: "content", change: { version } }) as PlanCommit;

function pruner(
  history: MemoryHistory,
  over: Partial<PruneBounds> = {},
  counted: number[] = [],
  passes: PruneOutcome[] = [],
) {
  return new ChangePruner(
    history,
    retention,
    silent,
    () => new Date(),
    bounds(over),
    (rows) => counted.push(rows),
    (outcome) => passes.push(outcome),
  );
}

describe("ChangePruner", () => {
  it("deletes more than two batches past the age limit with exact counts, and the pass ends", async () => {
    const history = new MemoryHistory(250);
    const counted: number[] = [];
    const p = pruner(history, {}, counted);
    try {
      const outcome = await p.prune();
      expect(outcome).toEqual({ deleted: 250, statements: 3, complete: true });
      expect(counted).toEqual([100, 100, 50]);
      expect(history.old).toBe(0);
    } finally {
      p.stop();
    }
  });

  it("stops at its statement bound and leaves the rest to the next pass", async () => {
    const history = new MemoryHistory(1_000);
    const p = pruner(history, { maxAgeStatements: 3 });
    try {
      expect(await p.prune()).toEqual({ deleted: 300, statements: 3, complete: false });
      expect(await p.prune()).toEqual({ deleted: 300, statements: 3, complete: false });
      expect(history.old).toBe(400);
    } finally {
      p.stop();
    }
  });

  it("tells how each pass ended: with work left while the backlog lasts, then complete; a failed pass has work left", async () => {
    const history = new MemoryHistory(650);
    const passes: PruneOutcome[] = [];
    const p = pruner(history, { maxAgeStatements: 3 }, [], passes);
    try {
      for (let i = 0; i < 3; i++) await p.prune();
      expect(passes).toEqual([
        { deleted: 300, statements: 3, complete: false },
        { deleted: 300, statements: 3, complete: false },
        { deleted: 50, statements: 1, complete: true },
      ]);
      history.pruneChangesBefore = () => Promise.reject(new Error("database gone"));
      await p.prune();
      expect(passes[3]).toEqual({ deleted: 0, statements: 0, complete: false });
    } finally {
      p.stop();
    }
  });

  it("stops at its time bound", async () => {
    const history = new MemoryHistory(1_000_000);
    const p = pruner(history, { batch: 1, maxAgeStatements: Number.MAX_SAFE_INTEGER, maxPassMs: 20 });
    try {
      const outcome = await p.prune();
      expect(outcome.complete).toBe(false);
      expect(outcome.deleted).toBeGreaterThan(0);
      expect(history.old).toBe(1_000_000 - outcome.deleted);
    } finally {
      p.stop();
    }
  });

  it("yields to the event loop after every statement, though the store answers synchronously", async () => {
    const history = new MemoryHistory(500);
    const p = pruner(history);
    // Another task on the event loop (what an incoming call is to the server): it runs again at
    // every turn of the loop, so it sees every count in between if the pass yields after each one.
    const seen = new Set<number>();
    let probing = true;
    const probe = () => {
      seen.add(history.statements.length);
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    try {
      await p.prune();
    } finally {
      probing = false;
      p.stop();
    }
    expect([...seen].filter((count) => count > 0 && count < 5).sort()).toEqual([1, 2, 3, 4]);
  });

  it("prunes each written task below its newest versions (the newest it wrote), one bounded statement at a time", async () => {
    const history = new MemoryHistory(
      0,
      new Map([
        ["a", 250],
        ["b", 10],
      ]),
    );
    const p = pruner(history);
    try {
      p.committed("a", commit(30));
      p.committed("a", commit(300)); // the newest written counts
      p.committed("b", commit(12));
      p.committed("c", commit(null)); // a write with no change of its own: nothing to prune
      p.committed("d", commit(10)); // no more versions than are kept (10): no statement
      expect(await p.prune()).toEqual({ deleted: 260, statements: 5, complete: true });
      expect(history.statements).toEqual(["age", "task a", "task a", "task a", "task b"]);
      expect(Object.fromEntries(history.upTo)).toEqual({ a: 290, b: 2 });
      history.statements = [];
      expect(await p.prune()).toEqual({ deleted: 0, statements: 1, complete: true });
      expect(history.statements).toEqual(["age"]);
    } finally {
      p.stop();
    }
  });

  it("neither rule starves the other: many written tasks and an age backlog both progress every pass", async () => {
    const tasks = new Map(Array.from({ length: 50 }, (_, i) => [`t${i}`, 5] as [string, number]));
    const history = new MemoryHistory(10_000, tasks);
    const p = pruner(history, { maxAgeStatements: 5, maxTaskStatements: 20 });
    try {
      for (const taskId of tasks.keys()) p.committed(taskId, commit(100));
      expect(await p.prune()).toMatchObject({ statements: 25, complete: false });
      expect(history.statements.filter((s) => s === "age")).toHaveLength(5);
      expect(history.old).toBe(10_000 - 500);
      // The tasks left over are pruned in the next passes, each after its own age statements.
      await p.prune();
      await p.prune();
      expect([...history.perTask.values()].every((rows) => rows === 0)).toBe(true);
      expect(history.old).toBe(10_000 - 1_500);
    } finally {
      p.stop();
    }
  });

  it("keeps a task whose pruning was cut short for the next pass", async () => {
    const history = new MemoryHistory(0, new Map([["a", 250]]));
    const p = pruner(history, { maxTaskStatements: 2 });
    try {
      p.committed("a", commit(400));
      expect(await p.prune()).toMatchObject({ deleted: 200, complete: false });
      expect(await p.prune()).toMatchObject({ deleted: 50, complete: true });
    } finally {
      p.stop();
    }
  });

  it("never runs two passes at once", async () => {
    const history = new MemoryHistory(1_000);
    const p = pruner(history, { batch: 10 });
    let active = 0;
    let most = 0;
    const original = history.pruneChangesBefore.bind(history);
    history.pruneChangesBefore = async (olderThan, limit) => {
      active += 1;
      most = Math.max(most, active);
      await new Promise((resolve) => setImmediate(resolve));
      active -= 1;
      return original(olderThan, limit);
    };
    try {
      const outcomes = await Promise.all([p.prune(), p.prune(), p.prune()]);
      expect(most).toBe(1);
      expect(outcomes.reduce((sum, o) => sum + o.deleted, 0)).toBe(1_000);
    } finally {
      p.stop();
    }
  });

  it("rests after each statement for restRatio times its duration, and still finishes the work", async () => {
    const history = new MemoryHistory(500);
    const p = pruner(history, { restRatio: 3 });
    const spans: { began: number; ended: number }[] = [];
    const original = history.pruneChangesBefore.bind(history);
    history.pruneChangesBefore = async (olderThan, limit) => {
      const began = performance.now();
      while (performance.now() - began < 4); // a statement that holds the event loop for 4 ms
      const rows = await original(olderThan, limit);
      spans.push({ began, ended: performance.now() });
      return rows;
    };
    try {
      expect(await p.prune()).toEqual({ deleted: 500, statements: 6, complete: true });
      for (let i = 1; i < spans.length; i++) {
        const busy = (spans[i - 1]?.ended ?? 0) - (spans[i - 1]?.began ?? 0);
        const rest = (spans[i]?.began ?? 0) - (spans[i - 1]?.ended ?? 0);
        // Timers round to whole milliseconds, so allow one of them.
        expect(rest).toBeGreaterThanOrEqual(3 * busy - 1);
      }
    } finally {
      p.stop();
    }
  });
});
