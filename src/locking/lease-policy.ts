/**
 * When a replica keeps, renews or hands on the Redis lease it holds for a task (pure: no I/O).
 *
 * A replica runs its queued writes of a task under one lease, in batches of `maxBatch`. When a batch
 * is spent it starts another under the same lease, unless another replica said lately that it waits
 * for the task: then the lease retires (it is handed on once the writes in flight finish).
 */

/** What the lock knows of a held lease when another local write asks for it. */
export interface HeldLease {
  /** Writes started under the lease in the current batch. */
  readonly uses: number;
  /** Set once the lease is to be handed on. */
  readonly retiring: boolean;
  /** True when the lease expired or could not be extended. */
  readonly lost: boolean;
  /** When another replica last said it waits for this task (ms since the epoch; 0: never). */
  readonly contendedAt: number;
}

export interface LeasePolicySettings {
  readonly maxBatch: number;
  readonly retryDelayMs: number;
}

/**
 * - `use`: the write runs under the lease, in the current batch;
 * - `new-batch`: the batch is spent but nobody waits: a new batch starts under the same lease;
 * - `retire`: the lease is handed on (the write asks Redis again after a short yield);
 * - `closed`: the lease is retiring or lost already.
 */
export type LeaseUse = "use" | "new-batch" | "retire" | "closed";

export function decideLeaseUse(lease: HeldLease, now: number, settings: LeasePolicySettings): LeaseUse {
  if (lease.retiring || lease.lost) return "closed";
  if (lease.uses < settings.maxBatch) return "use";
  return isContended(lease.contendedAt, now, settings.retryDelayMs) ? "retire" : "new-batch";
}

/**
 * Whether a replica's word that it waits still counts: a waiting replica says so again at every
 * attempt, at least every 2 retry delays, so a word older than 4 (and 50 ms) is stale. Also decides
 * whether a release is announced: nobody listens for an uncontended one.
 */
export function isContended(contendedAt: number, now: number, retryDelayMs: number): boolean {
  return now - contendedAt <= Math.max(50, 4 * retryDelayMs);
}
