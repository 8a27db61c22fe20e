import pino from "pino";
import type { ChangeKey, StoredChange } from "../../../src/plans/ports/records";
import { ChangeHub, type ChangeSource, type SubscriptionEnd } from "../../../src/watch/change-hub";

// A change history in memory whose reads take a random number of event-loop turns, so that reads,
// commits and notifications interleave differently on every seed.
class MemorySource implements ChangeSource {
  readonly log: StoredChange[] = [];
  exists = true;
  reads = 0;
  constructor(private readonly random: () => number) {}

  private marked = false;

  /**
   * Commits the next change as the service would: a mark (step 1) only on a live, unmarked plan
   * (first mark wins), which every later write of the plan keeps; a delete reports the deleted plan
   * (mark included) and clears it.
   */
  commit(what: "write" | "mark" | "delete" = "write"): StoredChange {
    const last = this.log[this.log.length - 1];
    const mark = what === "mark" && !this.marked && last !== undefined && last.kind !== "deleted";
    const step = mark ? 1 : 0;
    const version = mark ? (last?.version ?? 1) : (last?.version ?? 0) + 1;
    if (mark) this.marked = true;
    const kind = mark ? "implementation-started" : what === "delete" ? "deleted" : "updated";
    const change = {
      taskId: "t",
      version,
      step,
      kind,
      plan: { implementationStartedAt: this.marked ? new Date(0) : null },
      content: null,
    } as unknown as StoredChange;
    if (what === "delete") this.marked = false;
    this.log.push(change);
    return change;
  }

  async readChanges(_taskId: string, after: ChangeKey, limit: number): Promise<StoredChange[]> {
    this.reads += 1;
    // The snapshot of the history is taken at the start of the read, as a database read would.
    const rows = this.log.filter(
      (c) => c.version > after.version || (c.version === after.version && c.step > after.step),
    );
    await turns(Math.floor(this.random() * 4));
    return rows.slice(0, limit);
  }

  async watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>> {
    await turns(1);
    const last = this.log[this.log.length - 1] ?? null;
    return new Map(this.exists ? taskIds.map((id) => [id, last]) : []);
  }
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

interface Recorder {
  readonly keys: string[];
  end: SubscriptionEnd | null;
}

// A client reading at `pace`: after each change, the stream drains after that many event-loop turns
// (0: at once; Infinity: never). Without a pace it has always drained.
function recorder(pace?: () => number): Recorder & { subscriber: Parameters<ChangeHub["watch"]>[2] } {
  const keys: string[] = [];
  let draining: Promise<void> | null = null;
  const self: Recorder & { subscriber: Parameters<ChangeHub["watch"]>[2] } = {
    keys,
    end: null,
    subscriber: {
      withContent: false,
      deliver: (change) => {
        keys.push(`${change.version}.${change.step}`);
        const n = pace?.() ?? 0;
        if (n === Infinity) draining = new Promise(() => undefined);
        else if (n > 0) draining = turns(n).then(() => void (draining = null));
      },
      drained: () => draining,
      end: (reason) => (self.end = reason),
    },
  };
  return self;
}

const logger = pino({ level: "silent" });

describe("ChangeHub", () => {
  it.each(Array.from({ length: 40 }, (_, i) => i + 1))(
    "every watch gets each change after its start exactly once, in order, however reads, commits and notifications interleave (seed %i)",
    async (seed) => {
      const random = seeded(seed);
      const source = new MemorySource(random);
      const hub = new ChangeHub(source, logger, 5);
      const watches: { from: ChangeKey; rec: ReturnType<typeof recorder> }[] = [];
      for (let i = 0; i < 60; i++) {
        const roll = random();
        const change = source.commit(roll < 0.1 ? "mark" : roll < 0.15 ? "delete" : "write");
        // Most commits notify (half of them carrying the change), some notifications are lost.
        if (random() < 0.85) hub.notify("t", change, random() < 0.5 ? change : null);
        if (random() < 0.1) hub.notify("t", null);
        if (random() < 0.15) {
          const at = source.log[Math.floor(random() * source.log.length)] as StoredChange;
          const from = { version: at.version, step: at.step };
          const rec = recorder(() => Math.floor(random() * 3));
          hub.watch("t", from, rec.subscriber);
          watches.push({ from, rec });
        }
        await turns(Math.floor(random() * 3));
      }
      const expected = (from: ChangeKey) =>
        source.log
          .filter((c) => c.version > from.version || (c.version === from.version && c.step > from.step))
          .map((c) => `${c.version}.${c.step}`);
      // The poll delivers what lost notifications left behind.
      const deadline = Date.now() + 5_000;
      while (watches.some((w) => w.rec.keys.length < expected(w.from).length) && Date.now() < deadline)
        await turns(5);
      hub.close();
      expect(watches.length).toBeGreaterThan(0);
      for (const { from, rec } of watches) {
        expect(rec.keys).toEqual(expected(from));
      }
    },
  );

  it("a catch-up goes at its client's pace: a client that does not read is sent one change and no further page is read", async () => {
    const source = new MemorySource(() => 0);
    for (let i = 0; i < 250; i++) source.commit();
    const hub = new ChangeHub(source, logger, 60_000);
    const stalled = recorder(() => Infinity);
    hub.watch("t", { version: 0, step: 1 }, stalled.subscriber);
    const reading = recorder(() => 1);
    hub.watch("t", { version: 0, step: 1 }, reading.subscriber);
    await turns(2_000);
    expect(stalled.keys).toEqual(["1.0"]);
    expect(stalled.end).toBeNull();
    // The reading client got the whole history across pages, and then a live change.
    expect(reading.keys.length).toBe(250);
    hub.notify("t", source.commit());
    await turns(20);
    expect(reading.keys.at(-1)).toBe("251.0");
    expect(source.reads).toBeLessThanOrEqual(6);
    hub.close();
  });

  it("a catch-up keeps its stream's room for each read and lets it go after the page, read or failed; without room it reads nothing and ends no-room", async () => {
    const source = new MemorySource(() => 0.9);
    for (let i = 0; i < 10; i++) source.commit();
    const hub = new ChangeHub(source, logger, 60_000);
    let kept = 0;
    let taken = 0;
    const reading = recorder();
    const room = () => {
      taken += 1;
      kept += 1;
      let released = false;
      return { release: () => void (released || ((released = true), (kept -= 1))) };
    };
    hub.watch("t", { version: 0, step: 1 }, { ...reading.subscriber, room });
    await turns(200);
    expect(reading.keys).toHaveLength(10);
    expect(taken).toBeGreaterThan(0);
    expect(kept).toBe(0);

    const failing = new MemorySource(() => 0.9);
    failing.commit();
    failing.readChanges = () => Promise.reject(new Error("the database went away"));
    const hub2 = new ChangeHub(failing, logger, 60_000);
    const failed = recorder();
    hub2.watch("t", { version: 0, step: 1 }, { ...failed.subscriber, room });
    await turns(50);
    expect(failed.end?.kind).toBe("read-failed");
    expect(kept).toBe(0);

    const full = recorder();
    const readsBefore = source.reads;
    hub.watch("t", { version: 0, step: 1 }, { ...full.subscriber, room: () => null });
    await turns(50);
    expect(full.end).toEqual({ kind: "no-room" });
    expect([full.keys, source.reads]).toEqual([[], readsBefore]);
    hub.close();
    hub2.close();
  });

  it("watches of one task share the feed's reads once live", async () => {
    const source = new MemorySource(() => 0);
    const hub = new ChangeHub(source, logger, 60_000);
    const recs = Array.from({ length: 50 }, () => recorder());
    for (const rec of recs) hub.watch("t", { version: 0, step: 1 }, rec.subscriber);
    await turns(10);
    const before = source.reads;
    for (let i = 0; i < 10; i++) {
      hub.notify("t", source.commit());
      await turns(3);
    }
    expect(recs.every((rec) => rec.keys.length === 10)).toBe(true);
    expect(source.reads - before).toBeLessThanOrEqual(10);
    hub.close();
  });

  it("a notification carrying the next change is delivered without a read; one that may skip a change is not", async () => {
    const source = new MemorySource(() => 0);
    const hub = new ChangeHub(source, logger, 60_000);
    const rec = recorder();
    hub.watch("t", { version: 0, step: 1 }, rec.subscriber);
    await turns(5);
    hub.notify("t", source.commit()); // the feed reads once: it knows the change at its cursor
    await turns(5);
    const reads = source.reads;
    for (let i = 0; i < 5; i++) {
      const change = source.commit();
      hub.notify("t", change, change);
    }
    expect(source.reads).toBe(reads);
    expect(rec.keys).toEqual(["1.0", "2.0", "3.0", "4.0", "5.0", "6.0"]);
    // A mark whose notification is lost, then a write that carries the mark: the write cannot be
    // delivered as carried (the mark may sit between), so the feed reads and delivers both.
    source.commit("mark");
    const after = source.commit();
    hub.notify("t", after, after);
    await turns(10);
    expect(source.reads).toBe(reads + 1);
    expect(rec.keys.slice(-2)).toEqual(["6.1", "7.0"]);
    hub.close();
  });

  it("ends its watches when the task is gone, and when it closes", async () => {
    const source = new MemorySource(() => 0);
    const hub = new ChangeHub(source, logger, 60_000);
    const [gone, closing] = [recorder(), recorder()];
    hub.watch("t", { version: 0, step: 1 }, gone.subscriber);
    await turns(5);
    source.exists = false;
    hub.notify("t", null);
    await turns(5);
    expect(gone.end).toEqual({ kind: "task-deleted" });
    source.exists = true;
    hub.watch("t", { version: 0, step: 1 }, closing.subscriber);
    await turns(5);
    expect(hub.watchCount).toBe(1);
    hub.close();
    expect(closing.end).toEqual({ kind: "closing" });
    expect(hub.watchCount).toBe(0);
  });

  it("a watch resumed after a version (WatchPlan after_version) that the poll finds idle is not taken for a replaced history", async () => {
    // after_version N is the key (N, 1): after version N's mark, which a version need not have. The
    // newest change (N, 0) sorts before it, which the poll took for an import whose notification was
    // lost: it restarted the feed, the watch was sent version 1 again, and WatchPlan ended the stream
    // OUT_OF_RANGE (the console showed "watch interrupted" on a task nobody was writing).
    const source = new MemorySource(() => 0);
    source.commit();
    source.commit();
    const hub = new ChangeHub(source, logger, 5);
    const rec = recorder();
    hub.watch("t", { version: 2, step: 1 }, rec.subscriber);
    await new Promise((resolve) => setTimeout(resolve, 50)); // ten polls
    hub.notify("t", source.commit());
    await turns(10);
    expect(rec.keys).toEqual(["3.0"]);
    expect(rec.end).toBeNull();
    hub.close();
  });

  it("a cancelled watch receives nothing more", async () => {
    const source = new MemorySource(() => 0);
    const hub = new ChangeHub(source, logger, 60_000);
    const rec = recorder();
    const subscription = hub.watch("t", { version: 0, step: 1 }, rec.subscriber);
    await turns(5);
    hub.notify("t", source.commit());
    await turns(5);
    subscription.cancel();
    hub.notify("t", source.commit());
    await turns(5);
    expect(rec.keys).toEqual(["1.0"]);
    expect(hub.watchCount).toBe(0);
    hub.close();
  });
});
