/** One key's charges, oldest first: a bucket's first and latest charge times (ms) and its bytes. */
type Charges = { readonly start: number; at: number; bytes: number }[];

/**
 * Bytes charged per key over a sliding window of `windowMs` (pure: the caller passes the time). A
 * charge counts until `windowMs` after it. Charges within `windowMs / buckets` of the start of the
 * key's newest bucket merge into it and leave the window with its latest one, so a key holds at
 * most `buckets + 2` buckets and a charge never leaves the window early (a caller may wait up to one bucket longer than an
 * exact window would make it). At most `maxKeys` keys are held: a new key beyond that evicts the
 * key charged least recently, which then starts afresh (the memory bound wins over the count).
 */
export class StoredBytesWindow {
  private readonly keys = new Map<string, Charges>();
  private readonly bucketMs: number;

  constructor(
    readonly windowMs: number,
    private readonly maxKeys = 10_000,
    buckets = 20,
  ) {
    this.bucketMs = windowMs / buckets;
  }

  /** Keys held (for tests of the bound). */
  get size(): number {
    return this.keys.size;
  }

  /** Adds `bytes` to `key` at `now`. */
  charge(key: string, bytes: number, now: number): void {
    if (bytes <= 0) return;
    const charges = this.live(key, now) ?? [];
    const newest = charges.at(-1);
    if (newest && now - newest.start < this.bucketMs) {
      newest.at = Math.max(newest.at, now);
      newest.bytes += bytes;
    } else charges.push({ start: now, at: now, bytes });
    // Map order is the order of the latest charge: the first key is the one to evict.
    this.keys.delete(key);
    this.keys.set(key, charges);
    if (this.keys.size > this.maxKeys) {
      const oldest = this.keys.keys().next();
      if (!oldest.done) this.keys.delete(oldest.value);
    }
  }

  /** Bytes `key` was charged in the window ending at `now`. */
  total(key: string, now: number): number {
    return (this.live(key, now) ?? []).reduce((sum, { bytes }) => sum + bytes, 0);
  }

  /**
   * How long from `now` until `key`'s total is below `limit` (0 when it already is): the time when
   * enough of its oldest charges have left the window.
   */
  msUntilBelow(key: string, limit: number, now: number): number {
    const charges = this.live(key, now) ?? [];
    let total = charges.reduce((sum, { bytes }) => sum + bytes, 0);
    for (const { at, bytes } of charges) {
      if (total < limit) break;
      total -= bytes;
      if (total < limit) return at + this.windowMs - now;
    }
    return 0;
  }

  // The key's charges still in the window (expired ones dropped; a key with none is forgotten).
  private live(key: string, now: number): Charges | null {
    const charges = this.keys.get(key);
    if (!charges) return null;
    const first = charges.findIndex(({ at }) => at + this.windowMs > now);
    if (first === -1) {
      this.keys.delete(key);
      return null;
    }
    if (first > 0) charges.splice(0, first);
    return charges;
  }
}
