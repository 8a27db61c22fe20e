import type { WatchBuffers } from "./watch-buffers";

/** How much one stream may queue behind the message it is writing. */
export interface OutboxLimits {
  readonly messages: number;
  readonly bytes: number;
}

interface Outgoing {
  readonly bytes: Buffer;
  /** The plan version the client has seen once it has this message (null: none yet). */
  readonly version: number | null;
}

/**
 * One WatchPlan stream's messages on their way to its client. One message at a time is handed to the
 * transport (grpc-js writes one at a time anyway); the others wait here, where they can be dropped. A
 * stream ended for being slow frees its queue at once: handed to grpc-js, it would stay until the
 * client read it, since grpc-js sends the status only after every message written before it.
 */
export class WatchOutbox {
  private readonly queue: Outgoing[] = [];
  private queuedBytes = 0;
  private writing: Outgoing | null = null;
  private waiting: (() => void)[] = [];
  private closed = false;
  private handed: number | null = null;

  constructor(
    /** Writes one message; calls `written` once the transport took it (the client's window had room). */
    private readonly transport: (bytes: Buffer, written: () => void) => void,
    private readonly limits: OutboxLimits,
    private readonly buffers: WatchBuffers,
  ) {}

  /** The version of the last message handed to the transport: the client receives it before any end. */
  get handedVersion(): number | null {
    return this.handed;
  }

  /**
   * Writes `bytes` now if nothing is being written, else queues it; false, with nothing queued, when
   * the stream's queue (`limits`) or the replica's (`buffers`) has no room for it.
   */
  offer(bytes: Buffer, version: number | null): boolean {
    if (this.closed) return false;
    const message = { bytes, version };
    if (this.writing === null) {
      this.hand(message);
      return true;
    }
    const room =
      this.queue.length < this.limits.messages &&
      this.queuedBytes + bytes.length <= this.limits.bytes &&
      this.buffers.fits(bytes);
    if (!room) return false;
    this.queue.push(message);
    this.queuedBytes += bytes.length;
    this.buffers.queue(bytes);
    return true;
  }

  /** null when every message offered has been written; else resolves once it has (or the outbox closed). */
  drained(): Promise<void> | null {
    if (this.closed || this.writing === null) return null;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Drops the queue (the stream ended); the message being written stays the transport's. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const message of this.queue) this.buffers.unqueue(message.bytes);
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.wake();
  }

  /** The stream is gone: the message being written never will be, so it is not counted either. */
  abandon(): void {
    this.close();
    if (this.writing) this.buffers.written(this.writing.bytes);
    this.writing = null;
  }

  private hand(message: Outgoing): void {
    this.writing = message;
    this.handed = message.version;
    this.buffers.write(message.bytes);
    this.transport(message.bytes, () => this.written(message));
  }

  private written(message: Outgoing): void {
    if (this.writing !== message) return; // abandoned meanwhile
    this.buffers.written(message.bytes);
    this.writing = null;
    const next = this.queue.shift();
    if (next === undefined) {
      this.wake();
      return;
    }
    this.queuedBytes -= next.bytes.length;
    this.buffers.unqueue(next.bytes);
    this.hand(next);
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
