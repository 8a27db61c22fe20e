/**
 * The bytes this replica holds for its WatchPlan streams, in two parts: messages queued behind the
 * one a stream is writing (bounded by `queuedLimitBytes`, shared by every stream), and the message
 * each stream is writing (one per stream, bounded by the streams there are). A message is counted
 * once however many streams hold it: every watcher of a task shares the bytes of a live change
 * (encode-change.ts), so counting it per stream would cut readers for memory that is not there.
 */
export class WatchBuffers {
  private readonly queued = new Held();
  private readonly writing = new Held();

  constructor(readonly queuedLimitBytes: number) {}

  /** Bytes queued behind the messages being written, over all streams. */
  get queuedBytes(): number {
    return this.queued.bytes;
  }

  /** Bytes of the messages being written, over all streams. */
  get writingBytes(): number {
    return this.writing.bytes;
  }

  /** Whether `message` can be queued without the replica's queues passing their limit. */
  fits(message: Buffer): boolean {
    return this.queued.has(message) || this.queued.bytes + message.length <= this.queuedLimitBytes;
  }

  queue(message: Buffer): void {
    this.queued.add(message);
  }

  unqueue(message: Buffer): void {
    this.queued.remove(message);
  }

  write(message: Buffer): void {
    this.writing.add(message);
  }

  written(message: Buffer): void {
    this.writing.remove(message);
  }
}

// Buffers held by reference count; `bytes` counts each distinct buffer once.
class Held {
  private readonly counts = new Map<Buffer, number>();
  bytes = 0;

  has(message: Buffer): boolean {
    return this.counts.has(message);
  }

  add(message: Buffer): void {
    const count = this.counts.get(message) ?? 0;
    if (count === 0) this.bytes += message.length;
    this.counts.set(message, count + 1);
  }

  remove(message: Buffer): void {
    const count = this.counts.get(message);
    if (count === undefined) return;
    if (count > 1) {
      this.counts.set(message, count - 1);
      return;
    }
    this.counts.delete(message);
    this.bytes -= message.length;
  }
}
