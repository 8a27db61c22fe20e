import type { BudgetHolder, Hold, WatchBuffers } from "./watch-buffers";

/** How much one stream may queue behind the message it is writing. */
export interface OutboxLimits {
  readonly messages: number;
  readonly bytes: number;
}

/** Where a stream's messages go: the door's call (watch-transport.ts for gRPC, connect-stream.ts for HTTP). */
export interface WatchTransport {
  /** What writing `bytes` holds until its client takes it: the message, and the form the door sends. */
  holds(bytes: Buffer): readonly Hold[];
  /** The most writing one message can hold (a plan of the largest size, in the door's form). */
  readonly largestHold: number;
  /** Writes one message; calls `written` once the transport took it (the client's window had room). */
  write(bytes: Buffer, written: () => void): void;
  /** Drops what the transport holds for its client: the stream is reset, or its connection closed. */
  reset(): void;
}

interface Outgoing {
  readonly bytes: Buffer;
  /** The plan version the client has seen once it has this message (null: none yet). */
  readonly version: number | null;
  /** What it holds of the replica's budget while queued (its bytes) or being written (holds()). */
  holds: readonly Hold[];
}

/**
 * One WatchPlan stream's messages on their way to its client. One message at a time is handed to the
 * transport (grpc-js writes one at a time anyway); the others wait here, where they can be dropped. A
 * stream ended for being slow frees its queue at once: handed to grpc-js, it would stay until the
 * client read it, since grpc-js sends the status only after every message written before it. What
 * it holds draws on the replica's budget (watch-buffers.ts); a stream evicted from it for another's
 * sake also drops the message being written (`cut(true)`: its transport is reset).
 */
export class WatchOutbox implements BudgetHolder {
  private readonly queue: Outgoing[] = [];
  private queuedBytes = 0;
  private writing: Outgoing | null = null;
  private since: number | null = null;
  private waiting: (() => void)[] = [];
  private closed = false;
  private gone = false;
  private handed: number | null = null;
  private readonly kept = new Set<Hold>();

  constructor(
    private readonly transport: WatchTransport,
    private readonly limits: OutboxLimits,
    private readonly buffers: WatchBuffers,
    /** The stream cannot go on: a queued message found no room, or (`evicted`) the replica needed its bytes. */
    private readonly cut: (evicted: boolean) => void,
  ) {}

  /** Takes the stream's place among the replica's streams; false when they are all taken. */
  admit(): boolean {
    return this.buffers.admit(this);
  }

  /** The version of the last message handed to the transport: the client receives it before any end. */
  get handedVersion(): number | null {
    return this.handed;
  }

  get writingSince(): number | null {
    return this.since;
  }

  /**
   * Writes `bytes` now if nothing is being written, else queues it; false, with nothing queued, when
   * the stream's queue (`limits`) or the replica's budget (`buffers`) has no room for it.
   */
  offer(bytes: Buffer, version: number | null): boolean {
    if (this.closed) return false;
    this.freeKept();
    if (this.writing === null) return this.hand({ bytes, version, holds: [] });
    const holds = [{ key: bytes, bytes: bytes.length }];
    const room =
      this.queue.length < this.limits.messages &&
      this.queuedBytes + bytes.length <= this.limits.bytes &&
      this.buffers.reserve(holds, this);
    if (!room || this.closed) return false;
    this.queue.push({ bytes, version, holds });
    this.queuedBytes += bytes.length;
    this.buffers.queue(holds);
    return true;
  }

  /**
   * Room in the replica's budget for a message holding `bytes` (evicting stuck streams if needed),
   * kept until `release()` or until the stream offers its next message (the one it was kept for), so
   * that the work of reading and encoding one is not done for a stream that would be refused it, nor
   * by more streams at once than the budget holds; null when there is none.
   */
  room(bytes: number): { release(): void } | null {
    if (this.closed) return null;
    const hold = { key: {}, bytes };
    if (!this.buffers.reserve([hold], this) || this.closed) return null;
    this.buffers.keep(hold);
    this.kept.add(hold);
    return { release: () => this.free(hold) };
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
    this.freeKept();
    for (const message of this.queue) this.buffers.unqueue(message.holds);
    this.queue.length = 0;
    this.queuedBytes = 0;
    if (this.writing === null) this.buffers.leave(this);
    this.wake();
  }

  /** The stream is gone: the message being written never will be, so it is not counted either. */
  abandon(): void {
    this.close();
    if (this.writing) this.buffers.written(this.writing.holds);
    this.writing = null;
    this.since = null;
    this.gone = true;
    this.buffers.leave(this);
  }

  evict(): void {
    if (this.gone) return;
    this.abandon();
    this.cut(true);
  }

  private free(hold: Hold): void {
    if (this.kept.delete(hold)) this.buffers.free(hold);
  }

  // The room kept for a message being read: the message is here (or never will be).
  private freeKept(): void {
    for (const hold of this.kept) this.free(hold);
  }

  private hand(message: Outgoing): boolean {
    const holds = this.transport.holds(message.bytes);
    if (!this.buffers.reserve(holds, this) || this.closed) return false;
    message.holds = holds;
    this.writing = message;
    this.since = this.buffers.now();
    this.handed = message.version;
    this.buffers.write(holds);
    this.transport.write(message.bytes, () => this.written(message));
    return true;
  }

  private written(message: Outgoing): void {
    if (this.writing !== message) return; // abandoned meanwhile
    this.buffers.written(message.holds);
    this.writing = null;
    this.since = null;
    if (this.closed) this.buffers.leave(this);
    const next = this.queue.shift();
    if (next === undefined) {
      this.wake();
      return;
    }
    this.queuedBytes -= next.bytes.length;
    this.buffers.unqueue(next.holds);
    if (!this.hand(next)) this.cut(false);
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
