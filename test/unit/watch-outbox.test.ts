import { WatchBuffers } from "../../src/grpc/watch-buffers";
import { WatchOutbox } from "../../src/grpc/watch-outbox";

// A transport whose writes complete only when the test says so (a client that reads on demand).
function transport() {
  const writes: { bytes: Buffer; done: () => void }[] = [];
  return {
    writes,
    write: (bytes: Buffer, done: () => void) => void writes.push({ bytes, done }),
  };
}

const message = (size: number) => Buffer.alloc(size, 1);

describe("WatchOutbox", () => {
  it("writes one message at a time and queues the rest in order, within the stream's limits", () => {
    const t = transport();
    const buffers = new WatchBuffers(1_000_000);
    const outbox = new WatchOutbox(t.write, { messages: 2, bytes: 160 }, buffers);
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

  it("a client that is never slow is never refused: a message to an idle stream is written whatever its size", () => {
    const t = transport();
    const outbox = new WatchOutbox(t.write, { messages: 1, bytes: 10 }, new WatchBuffers(10));
    for (let version = 1; version <= 5; version++) {
      expect(outbox.offer(message(1_000), version)).toBe(true);
      t.writes[version - 1]?.done();
    }
    expect(t.writes).toHaveLength(5);
  });

  it("the replica's queues are shared: a message queued by several streams counts once, and a full replica refuses", () => {
    const buffers = new WatchBuffers(300);
    const shared = message(200);
    const streams = [transport(), transport(), transport()].map((t) => {
      const outbox = new WatchOutbox(t.write, { messages: 10, bytes: 1_000 }, buffers);
      outbox.offer(message(50), 1); // being written
      return outbox;
    });
    for (const outbox of streams) expect(outbox.offer(shared, 2)).toBe(true);
    expect(buffers.queuedBytes).toBe(200);
    expect(streams[0]?.offer(message(101), 3)).toBe(false);
    expect(streams[0]?.offer(message(100), 3)).toBe(true);
    expect(buffers.queuedBytes).toBe(300);
  });

  it("close drops the queue at once; the message being written counts until it is written or abandoned", async () => {
    const t = transport();
    const buffers = new WatchBuffers(1_000);
    const outbox = new WatchOutbox(t.write, { messages: 10, bytes: 1_000 }, buffers);
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
    const outbox = new WatchOutbox(t.write, { messages: 10, bytes: 1_000 }, new WatchBuffers(1_000));
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
