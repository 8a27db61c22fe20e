import { WatchBuffers } from "../../../src/grpc/watch/watch-buffers";
import { WatchOutbox } from "../../../src/grpc/watch/watch-outbox";

// A transport whose writes complete only when the test says so (a client that reads on demand); it
// holds the message only (gRPC and Connect add their own form: watch-transport.ts, connect-stream.ts).
function transport() {
  const writes: { bytes: Buffer; done: () => void }[] = [];
  let resets = 0;
  return {
    writes,
    resets: () => resets,
    largestHold: 1_000,
    holds: (bytes: Buffer) => [{ key: bytes, bytes: bytes.length }],
    write: (bytes: Buffer, done: () => void) => void writes.push({ bytes, done }),
    reset: () => void (resets += 1),
  };
}

const never = () => undefined;

const message = (size: number) => Buffer.alloc(size, 1);

describe("WatchOutbox", () => {
  it("writes one message at a time and queues the rest in order, within the stream's limits", () => {
    const t = transport();
    const buffers = new WatchBuffers(1_000_000);
    const outbox = new WatchOutbox(t, { messages: 2, bytes: 160 }, buffers, never);
    const [a, b, c, d] = [message(100), message(100), message(100), message(60)];
    expect(outbox.offer(a, 1)).toBe(true);
    expect(outbox.offer(b, 2)).toBe(true);
    expect(outbox.offer(c, 3)).toBe(false); // 100 + 100 bytes queued would pass 160
    expect(outbox.offer(d, 3)).toBe(true);
    expect(outbox.offer(message(1), 4)).toBe(false); // two messages queued already
    expect(t.writes.map((w) => w.bytes)).toEqual([a]);
    expect([outbox.handedVersion, buffers.writingBytes, buffers.queuedBytes]).toEqual([1, 100, 160]);
    t.writes[0]?.done();
    expect(t.writes.map((w) => w.bytes)).toEqual([a, b]);
    expect([outbox.handedVersion, buffers.writingBytes, buffers.queuedBytes]).toEqual([2, 100, 60]);
  });

  it("a client that is never slow is never refused: a message to an idle stream is written whatever the stream's queue limits", () => {
    const t = transport();
    const outbox = new WatchOutbox(t, { messages: 1, bytes: 10 }, new WatchBuffers(1_000), never);
    for (let version = 1; version <= 5; version++) {
      expect(outbox.offer(message(1_000), version)).toBe(true);
      t.writes[version - 1]?.done();
    }
    expect(t.writes).toHaveLength(5);
  });

  it("the message being written draws on the replica's budget: room is made by evicting the stream stuck longest (at least STUCK_MS), its transport reset", () => {
    let now = 0;
    const buffers = new WatchBuffers(250, 10, () => now, 1_000);
    const cuts: string[] = [];
    const open = (name: string) => {
      const t = transport();
      const outbox = new WatchOutbox(t, { messages: 10, bytes: 1_000 }, buffers, (evicted) => {
        cuts.push(`${name}${evicted ? " evicted" : ""}`);
        if (evicted) t.reset();
      });
      expect(outbox.admit()).toBe(true);
      return { t, outbox };
    };
    const [a, b, c] = [open("a"), open("b"), open("c")];
    expect(a.outbox.offer(message(100), 1)).toBe(true); // never taken
    now = 500;
    expect(b.outbox.offer(message(100), 1)).toBe(true); // never taken
    now = 1_200;
    // 50 more fit; 100 do not, and only a has waited STUCK_MS: it goes, and its bytes with it.
    expect(c.outbox.offer(message(100), 1)).toBe(true);
    expect([cuts, a.t.resets(), buffers.writingBytes, buffers.streamCount]).toEqual([
      ["a evicted"],
      1,
      200,
      2,
    ]);
    // b has waited 700 ms only: nobody can be evicted, so a message that does not fit is refused.
    c.t.writes[0]?.done();
    expect(c.outbox.offer(message(151), 2)).toBe(false);
    expect(c.outbox.offer(message(150), 2)).toBe(true);
    expect(cuts).toEqual(["a evicted"]);
    expect(a.outbox.offer(message(1), 2)).toBe(false); // an evicted stream takes nothing more
  });

  it("caps the streams a replica serves; a place is freed when its stream holds nothing any more", () => {
    const buffers = new WatchBuffers(1_000, 2);
    const [a, b, c] = [transport(), transport(), transport()].map(
      (t) => new WatchOutbox(t, { messages: 10, bytes: 1_000 }, buffers, never),
    );
    expect([a?.admit(), b?.admit(), c?.admit()]).toEqual([true, true, false]);
    a?.offer(message(10), 1);
    a?.close(); // ended, its message still being written: it keeps its place (it can still be evicted)
    expect(c?.admit()).toBe(false);
    a?.abandon();
    expect(c?.admit()).toBe(true);
    expect(buffers.streamCount).toBe(2);
  });

  it("room kept for a message being read counts against the budget until it is released or the message offered, so streams that start together read no more than it holds", () => {
    const buffers = new WatchBuffers(2_500);
    const [a, b, c] = [transport(), transport(), transport()].map(
      (t) => new WatchOutbox(t, { messages: 10, bytes: 10_000 }, buffers, never),
    );
    const [roomA, roomB] = [a?.room(1_000), b?.room(1_000)];
    expect([roomA, roomB].every((room) => room !== null)).toBe(true);
    expect(buffers.readingBytes).toBe(2_000);
    expect(c?.room(1_000)).toBeNull(); // a third read at once would pass the budget: it is not done
    expect(a?.offer(message(800), 1)).toBe(true); // the message read: its room is given back for it
    expect([buffers.readingBytes, buffers.writingBytes]).toEqual([1_000, 800]);
    roomA?.release(); // released after its message went: nothing is freed twice
    expect(buffers.readingBytes).toBe(1_000);
    roomB?.release(); // b read nothing after all (its history had no more)
    expect(buffers.readingBytes).toBe(0);
    expect(c?.room(1_000)).not.toBeNull();
    c?.close(); // the stream ended while it read
    expect(buffers.readingBytes).toBe(0);
  });

  it("the replica's queues are shared: a message queued by several streams counts once, and a full replica refuses", () => {
    const buffers = new WatchBuffers(450); // 3 x 50 being written, and the queues
    const shared = message(200);
    const streams = [transport(), transport(), transport()].map((t) => {
      const outbox = new WatchOutbox(t, { messages: 10, bytes: 1_000 }, buffers, never);
      outbox.offer(message(50), 1); // being written
      return outbox;
    });
    for (const outbox of streams) expect(outbox.offer(shared, 2)).toBe(true);
    expect(buffers.queuedBytes).toBe(200);
    expect(streams[0]?.offer(message(101), 3)).toBe(false);
    expect(streams[0]?.offer(message(100), 3)).toBe(true);
    expect([buffers.queuedBytes, buffers.writingBytes]).toEqual([300, 150]);
  });

  it("close drops the queue at once; the message being written counts until it is written or abandoned", async () => {
    const t = transport();
    const buffers = new WatchBuffers(1_000);
    const outbox = new WatchOutbox(t, { messages: 10, bytes: 1_000 }, buffers, never);
    outbox.offer(message(100), 1);
    outbox.offer(message(200), 2);
    const drained = outbox.drained();
    expect(drained).not.toBeNull();
    outbox.close();
    await drained; // a catch-up waiting on it goes on (and finds its watch ended)
    expect([buffers.queuedBytes, buffers.writingBytes]).toEqual([0, 100]);
    expect(outbox.offer(message(1), 3)).toBe(false);
    expect(outbox.handedVersion).toBe(1);
    outbox.abandon();
    expect(buffers.writingBytes).toBe(0);
    t.writes[0]?.done(); // a late completion after abandon changes nothing
    expect([buffers.queuedBytes, buffers.writingBytes, t.writes.length]).toEqual([0, 0, 1]);
  });

  it("drained is null when everything offered was written, and resolves once the queue has been written", async () => {
    const t = transport();
    const outbox = new WatchOutbox(t, { messages: 10, bytes: 1_000 }, new WatchBuffers(1_000), never);
    expect(outbox.drained()).toBeNull();
    outbox.offer(message(10), 1);
    outbox.offer(message(10), 2);
    let resolved = false;
    void outbox.drained()?.then(() => (resolved = true));
    t.writes[0]?.done();
    await Promise.resolve();
    expect(resolved).toBe(false);
    t.writes[1]?.done();
    await Promise.resolve();
    expect(resolved).toBe(true);
    expect(outbox.drained()).toBeNull();
  });
});
