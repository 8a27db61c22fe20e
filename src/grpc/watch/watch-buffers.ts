/** One part of what a stream holds for its client, counted once per replica however many streams hold it. */
export interface Hold {
  /** Identity of what is held (a message's bytes, its encoded form, a transport's own copy). */
  readonly key: object;
  readonly bytes: number;
}

/** A stream as the replica's budget sees it (watch-outbox.ts). */
export interface BudgetHolder {
  /** When the message it is writing was handed to its transport (ms); null when it writes none. */
  readonly writingSince: number | null;
  /** Ends the stream for the others' sake: what it holds, the transport's copy included, is dropped now. */
  evict(): void;
}

/** How long a message may stay unwritten before its stream may be evicted to make room for another. */
export const STUCK_MS = 1_000;

/**
 * What this replica holds for its WatchPlan streams, both doors together: messages queued behind
 * the one a stream is writing, and the message each stream is writing in the form its door holds it
 * (gRPC's framed copy, Connect's JSON envelope), and room kept for a message while it is read and
 * encoded, all under one budget (`limitBytes`, PLAN_WATCH_BUFFER_BYTES), and the streams themselves
 * under a cap (`maxStreams`). A held part is counted once however many streams hold it: every
 * watcher of a task shares the bytes of a live change (encode-change.ts), so counting it per stream
 * would cut readers for memory that is not there. When a stream needs room the budget lacks, the
 * streams whose message has waited longest for their client (at least STUCK_MS) are evicted until
 * it fits; if none can be, the stream asking is refused (and ends WATCH_TOO_SLOW). A client that never reads therefore holds its share only
 * until someone else needs it.
 */
export class WatchBuffers {
  private readonly queued = new Held();
  private readonly writing = new Held();
  private readonly reading = new Held();
  private readonly holders = new Set<BudgetHolder>();

  constructor(
    readonly limitBytes: number,
    readonly maxStreams: number = Number.MAX_SAFE_INTEGER,
    private readonly clock: () => number = Date.now,
    private readonly stuckMs: number = STUCK_MS,
  ) {}

  /** Bytes queued behind the messages being written, over all streams. */
  get queuedBytes(): number {
    return this.queued.bytes;
  }

  /** Bytes of the messages being written (in their doors' form), over all streams. */
  get writingBytes(): number {
    return this.writing.bytes;
  }

  /** Room kept for messages being read and encoded (a catch-up's read, a snapshot), over all streams. */
  get readingBytes(): number {
    return this.reading.bytes;
  }

  /** The clock stuck times are measured on (ms). */
  now(): number {
    return this.clock();
  }

  /** Streams holding a place (open, or ended with a message still being written). */
  get streamCount(): number {
    return this.holders.size;
  }

  /** Takes a place for a new stream; false when the replica already has `maxStreams`. */
  admit(holder: BudgetHolder): boolean {
    if (this.holders.has(holder)) return true;
    if (this.holders.size >= this.maxStreams) return false;
    this.holders.add(holder);
    return true;
  }

  /** The stream holds nothing any more: its place is free. */
  leave(holder: BudgetHolder): void {
    this.holders.delete(holder);
  }

  /**
   * Whether `holds` fit the budget, evicting the longest-stuck streams other than `requester` to
   * make room; false (nothing evicted in vain is undone) when it still does not fit.
   */
  reserve(holds: readonly Hold[], requester: BudgetHolder): boolean {
    for (;;) {
      const held = this.queued.bytes + this.writing.bytes + this.reading.bytes;
      if (held + this.needed(holds) <= this.limitBytes) return true;
      const victim = this.longestStuck(requester);
      if (victim === null) return false;
      this.holders.delete(victim);
      victim.evict();
    }
  }

  /**
   * Keeps room (already reserved) for a message while it is read and encoded: the reads of many
   * streams that start together are then bounded by the budget too, not only what they send.
   */
  keep(hold: Hold): void {
    this.reading.add(hold);
  }

  /** The message kept room for was sent, or will not be: its room is free. */
  free(hold: Hold): void {
    this.reading.remove(hold);
  }

  queue(holds: readonly Hold[]): void {
    for (const hold of holds) this.queued.add(hold);
  }

  unqueue(holds: readonly Hold[]): void {
    for (const hold of holds) this.queued.remove(hold);
  }

  write(holds: readonly Hold[]): void {
    for (const hold of holds) this.writing.add(hold);
  }

  written(holds: readonly Hold[]): void {
    for (const hold of holds) this.writing.remove(hold);
  }

  private needed(holds: readonly Hold[]): number {
    let bytes = 0;
    for (const hold of holds)
      if (!this.queued.has(hold.key) && !this.writing.has(hold.key)) bytes += hold.bytes;
    return bytes;
  }

  private longestStuck(requester: BudgetHolder): BudgetHolder | null {
    const before = this.clock() - this.stuckMs;
    let oldest: BudgetHolder | null = null;
    for (const holder of this.holders) {
      const since = holder.writingSince;
      if (holder === requester || since === null || since > before) continue;
      if (oldest === null || since < (oldest.writingSince as number)) oldest = holder;
    }
    return oldest;
  }
}

// Parts held by reference count; `bytes` counts each distinct key once.
class Held {
  private readonly counts = new Map<object, number>();
  bytes = 0;

  has(key: object): boolean {
    return this.counts.has(key);
  }

  add(hold: Hold): void {
    const count = this.counts.get(hold.key) ?? 0;
    if (count === 0) this.bytes += hold.bytes;
    this.counts.set(hold.key, count + 1);
  }

  remove(hold: Hold): void {
    const count = this.counts.get(hold.key);
    if (count === undefined) return;
    if (count > 1) {
      this.counts.set(hold.key, count - 1);
      return;
    }
    this.counts.delete(hold.key);
    this.bytes -= hold.bytes;
  }
}
