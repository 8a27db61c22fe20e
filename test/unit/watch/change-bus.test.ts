import pino from "pino";
import type { Broadcast } from "../../../src/plans/ports/broadcast";
import type { ChangeKey, ChangeRecord, StoredChange } from "../../../src/plans/ports/records";
import { broadcastChangeBus, type ChangeBus } from "../../../src/watch/change-bus";
import { ChangeHub, type ChangeSource } from "../../../src/watch/change-hub";
import {
  changeMessageTaskId,
  interestMessage,
  parseChangeMessage,
  parseInterestMessage,
} from "../../../src/watch/change-message";
import { RemoteInterest } from "../../../src/watch/remote-interest";

// Pub/sub in memory: every replica hears every message, its own included, as on Redis.
class Channel {
  readonly sent: string[] = [];
  private readonly listeners: ((message: string) => void)[] = [];
  broadcast(): Broadcast {
    return {
      publish: (message) => {
        this.sent.push(message);
        for (const listener of [...this.listeners]) listener(message);
      },
      listen: (onMessage) => void this.listeners.push(onMessage),
      close: async () => undefined,
    };
  }
  changes(): string[] {
    return this.sent.filter((message) => parseInterestMessage(message) === null);
  }
}

// A history that never has anything to read: these tests look at what the bus sends and tells the hub.
const emptySource: ChangeSource = {
  readChanges: async () => [],
  watchedTaskStates: async (taskIds: readonly string[]) =>
    new Map<string, ChangeKey | null>(taskIds.map((id) => [id, null])),
};

const change = (taskId: string, version: number): ChangeRecord => ({
  taskId,
  version,
  step: 0,
  kind: "updated",
  committedAt: new Date(0),
  plan: {
    taskId,
    title: "Plan",
    contentBytes: 1,
    contentChars: 1,
    version,
    createdBy: "agent",
    createdAt: new Date(0),
    updatedAt: new Date(0),
    latestRevisionNumber: 1,
    deleted: false,
    implementationStartedAt: null,
    implementationStartedBy: null,
    implementationStartedSessionId: null,
    checklist: null,
  },
  revision: { id: "r", number: 1, coalesced: true },
  author: { kind: "agent", name: "a" },
});

const settings = { refreshMs: 1_000, ttlMs: 5_000, settleMs: 300 };
const subscriber = {
  withContent: false,
  deliver: (_c: StoredChange) => undefined,
  drained: () => null,
  end: () => undefined,
};

describe("change notifications between replicas", () => {
  let channel: Channel;
  let hubs: ChangeHub[];
  let buses: ChangeBus[];

  beforeEach(() => {
    jest.useFakeTimers();
    channel = new Channel();
    hubs = [0, 1].map(() => new ChangeHub(emptySource, pino({ level: "silent" }), 60_000));
    buses = hubs.map((hub) => broadcastChangeBus(hub, channel.broadcast(), settings));
  });

  afterEach(async () => {
    for (const bus of buses) await bus.close();
    for (const hub of hubs) hub.close();
    jest.useRealTimers();
  });

  it("sends nothing for a change of a task no other replica watches, and tells the writer's own hub", () => {
    const [a] = buses as [ChangeBus];
    const notify = jest.spyOn(hubs[0] as ChangeHub, "notify");
    a.changed("t", change("t", 2));
    expect(channel.sent).toEqual([]);
    expect(notify).toHaveBeenCalledWith("t", expect.objectContaining({ version: 2 }), expect.anything());
  });

  it("publishes the changes of a task once another replica said it watches it, carrying the change", () => {
    const [a] = buses as [ChangeBus];
    const [, hubB] = hubs as [ChangeHub, ChangeHub];
    hubB.watch("t", { version: 0, step: 0 }, subscriber);
    const heard = jest.spyOn(hubB, "notify");
    expect(channel.sent.map(parseInterestMessage)).toEqual([
      { instanceId: expect.any(String), taskIds: ["t"] },
    ]);
    a.changed("t", change("t", 3));
    a.changed("u", change("u", 1));
    expect(channel.changes().map((m) => parseChangeMessage(m)?.taskId)).toEqual(["t"]);
    expect(heard).toHaveBeenCalledWith("t", { version: 3, step: 0 }, expect.objectContaining({ version: 3 }));
  });

  it("does not publish for its own watchers: they hear its changes without Redis", () => {
    const [a] = buses as [ChangeBus];
    (hubs[0] as ChangeHub).watch("t", { version: 0, step: 0 }, subscriber);
    a.changed("t", change("t", 2));
    expect(channel.changes()).toEqual([]);
  });

  it("repeats the tasks it watches, and a replica stops publishing once a watch's announcements stop", async () => {
    const [a] = buses as [ChangeBus];
    const [, hubB] = hubs as [ChangeHub, ChangeHub];
    const watched = hubB.watch("t", { version: 0, step: 0 }, subscriber);
    await jest.advanceTimersByTimeAsync(3_500);
    const repeats = channel.sent.filter((m) => parseInterestMessage(m)?.taskIds.includes("t"));
    expect(repeats.length).toBeGreaterThanOrEqual(3);
    a.changed("t", change("t", 2));
    expect(channel.changes()).toHaveLength(1);
    watched.cancel();
    await jest.advanceTimersByTimeAsync(settings.ttlMs + settings.refreshMs);
    a.changed("t", change("t", 3));
    expect(channel.changes()).toHaveLength(1);
  });

  it("reads a newly watched task's history once more after the others had time to hear of it", () => {
    const [, hubB] = hubs as [ChangeHub, ChangeHub];
    const recheck = jest.spyOn(hubB, "recheck");
    hubB.watch("t", { version: 0, step: 0 }, subscriber);
    jest.advanceTimersByTime(settings.settleMs - 1);
    expect(recheck).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(recheck).toHaveBeenCalledWith("t");
  });
});

describe("interest messages", () => {
  it("round-trip, and a replica of an earlier version reads no task id in them (so ignores them)", () => {
    const message = interestMessage("replica-1", ["a", "b-2"]);
    expect(parseInterestMessage(message)).toEqual({ instanceId: "replica-1", taskIds: ["a", "b-2"] });
    expect(changeMessageTaskId(message)).toBe("");
    expect(parseInterestMessage("t\t3.0\t{}")).toBeNull();
  });

  it("are split so that no message lists more than 500 tasks", async () => {
    jest.useFakeTimers();
    const channel = new Channel();
    const hub = new ChangeHub(emptySource, pino({ level: "silent" }), 60_000);
    const bus = broadcastChangeBus(hub, channel.broadcast(), settings);
    for (let i = 0; i < 1_200; i++) hub.watch(`t${i}`, { version: 0, step: 0 }, subscriber);
    channel.sent.length = 0;
    await jest.advanceTimersByTimeAsync(settings.refreshMs);
    const lists = channel.sent.map((m) => parseInterestMessage(m)?.taskIds ?? []);
    expect(lists.map((ids) => ids.length)).toEqual([500, 500, 200]);
    expect(new Set(lists.flat()).size).toBe(1_200);
    void bus.close();
    hub.close();
    jest.useRealTimers();
  });

  it("expire: a task is watched elsewhere only until its last announcement's time runs out", () => {
    let now = 1_000;
    const interest = new RemoteInterest(100, () => now);
    interest.heard(["t"]);
    now = 1_099;
    expect(interest.has("t")).toBe(true);
    now = 1_100;
    expect(interest.has("t")).toBe(false);
    expect(interest.has("never")).toBe(false);
  });
});
