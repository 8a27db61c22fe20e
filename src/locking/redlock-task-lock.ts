import { randomUUID } from "node:crypto";
import { ExecutionError, type Lock, Redlock, ResourceLockedError } from "@sesamecare-oss/redlock";
import type Redis from "ioredis";
import type { Logger } from "pino";
import { InProcessTaskLock } from "./in-process-task-lock";
import { LeaseChannels } from "./lease-channels";
import { decideLeaseUse, isContended } from "./lease-policy";
import { connectNodes, quitWithin, quorumReady, settledWithin, subscribersOf } from "./redis-nodes";
import { redisKeys } from "./redis-keys";
import { type LockLease, LockUnavailableError, type TaskLock } from "../plans/ports/task-lock";

/** Settings of the distributed lock (see Config.redis). */
export interface RedlockSettings {
  readonly urls: readonly string[];
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly retryDelayMs: number;
  readonly maxBatch: number;
}

// A Redis lease this process holds for one task, possibly across several local writes.
// It is also the lease its writes see (LockLease): `lost` is set once it expires or an extension fails.
interface Hold {
  lock: Lock;
  lost: boolean;
  /** Writes started under this lease in the current batch (at most maxBatch). */
  uses: number;
  /** Writes running under it right now (at most PIPELINE_DEPTH). */
  active: number;
  /** Set once the lease is to be handed on: no further write may start under it. */
  retiring: boolean;
  /** Set once the hold exists (its callback marks the hold itself). */
  expiryTimer: NodeJS.Timeout | undefined;
  readonly extendTimer: NodeJS.Timeout;
  /** Settles once the lease is given back (released or left to expire). */
  readonly dropped: Promise<void>;
  readonly markDropped: () => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

// After a batch that another replica waits behind, this replica pauses this long before
// re-acquiring, so that the waiter (woken by the release announcement) gets the lock first.
const HANDOFF_YIELD_MS = 5;

// Writes of one task that run at once under one lease. With 2, the next local write's transaction
// is already waiting on the task's row lock when the previous one commits, as it would be across
// replicas without Redis; the row lock (invariant 2) orders the two.
const PIPELINE_DEPTH = 2;

// Longest wait at start-up for a quorum of Redis connections.
const STARTUP_WAIT_MS = 2_000;

/**
 * The per-task lock across replicas: Redlock over independent Redis nodes, behind a per-process
 * queue so that one acquisition per replica contends in Redis. A replica keeps the lease for the
 * writes queued locally and runs up to PIPELINE_DEPTH of them at once under it; after maxBatch
 * writes it hands the lease on if another replica said it waits, and otherwise starts a new batch.
 * Releases of a lease another replica waits for are announced, so it wakes at once. The lease is
 * extended while held; if it is lost the lease is marked lost. Correctness never rests on the lease:
 * the database fence does.
 */
export class RedlockTaskLock implements TaskLock {
  private readonly local = new InProcessTaskLock(PIPELINE_DEPTH);
  private readonly holds = new Map<string, Hold>();
  private readonly acquiring = new Map<string, Promise<Hold>>();
  private readonly yieldUntil = new Map<string, number>();
  // When another replica last said it waits for a task (kept across leases: a waiter that spoke
  // before this replica took the lease still waits).
  private readonly waitedFor = new Map<string, number>();
  private readonly keys: ReturnType<typeof redisKeys>;
  private readonly channels: LeaseChannels;

  private constructor(
    private readonly redlock: Redlock,
    private readonly clients: readonly Redis[],
    private readonly subscribers: readonly Redis[],
    private readonly settings: RedlockSettings,
    private readonly logger: Logger,
  ) {
    this.keys = redisKeys(settings.keyPrefix);
    this.channels = new LeaseChannels(clients, subscribers, this.keys, randomUUID(), (taskId) =>
      this.heardWaiting(taskId),
    );
  }

  /**
   * Connects one ioredis client per node and waits (at most STARTUP_WAIT_MS) until a quorum is
   * ready, so the first writes after start-up do not fail for connections still opening. Commands
   * fail fast while a node is down (no offline queue); without a quorum the service still starts
   * (reads work, writes fail LOCK_UNAVAILABLE until a quorum is back).
   */
  static async connect(settings: RedlockSettings, logger: Logger): Promise<RedlockTaskLock> {
    const clients = connectNodes(settings.urls, logger);
    // Retries are ours (bounded by the wait), so Redlock makes a single attempt per call.
    const redlock = new Redlock(clients, {
      retryCount: 0,
      driftFactor: 0.01,
      automaticExtensionThreshold: 0,
    });
    redlock.on("error", () => undefined); // expected contention; failures surface through acquire
    const lock = new RedlockTaskLock(redlock, clients, subscribersOf(clients), settings, logger);
    if (!(await quorumReady(clients, STARTUP_WAIT_MS)))
      logger.warn("no Redis quorum at start-up; writes fail with LOCK_UNAVAILABLE until one is back");
    return lock;
  }

  async withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const deadline = Date.now() + waitMs;
    return this.local.withLock(taskId, waitMs, async () => {
      const hold = await this.obtain(taskId, deadline);
      try {
        return await work(hold);
      } finally {
        await this.afterUse(taskId, hold);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.holds].map(([taskId, hold]) => this.drop(taskId, hold)));
    // Not Redlock.quit(), which would leave a reconnecting client retrying forever (see quitWithin).
    await Promise.all([...this.subscribers, ...this.clients].map((client) => quitWithin(client, 1_000)));
  }

  // Uses the lease this process holds for the task while it may take another write; otherwise
  // joins (or starts) the one acquisition in flight for the task, so the process never contends
  // with itself.
  private async obtain(taskId: string, deadline: number): Promise<Hold> {
    for (;;) {
      const kept = this.holds.get(taskId);
      if (kept && this.reusable(taskId, kept)) {
        kept.uses++;
        kept.active++;
        return kept;
      }
      let pending = this.acquiring.get(taskId);
      if (!pending) {
        pending = this.acquire(taskId, deadline, kept).finally(() => this.acquiring.delete(taskId));
        this.acquiring.set(taskId, pending);
      }
      await pending; // then take it above (or, if another write spent it first, wait for the next)
    }
  }

  // Whether a held lease may take one more local write (lease-policy.ts). A retiring or lost lease
  // is given back by the last write in flight under it, or now if there is none.
  private reusable(taskId: string, hold: Hold): boolean {
    const lost = hold.lost;
    const contendedAt = this.waitedFor.get(taskId) ?? 0;
    const lease = { uses: hold.uses, retiring: hold.retiring, lost, contendedAt };
    switch (decideLeaseUse(lease, Date.now(), this.settings)) {
      case "use":
        return true;
      case "new-batch":
        hold.uses = 0;
        return true;
      case "retire":
        hold.retiring = true;
        this.yieldUntil.set(taskId, Date.now() + HANDOFF_YIELD_MS);
        break;
      case "closed":
        break;
    }
    if (hold.active === 0) void this.drop(taskId, hold);
    return false;
  }

  private contended(taskId: string): boolean {
    return isContended(this.waitedFor.get(taskId) ?? 0, Date.now(), this.settings.retryDelayMs);
  }

  private heardWaiting(taskId: string): void {
    const now = Date.now();
    this.waitedFor.set(taskId, now);
    // Stale entries go once the map grows (waiting is rare, and a stale entry means nothing).
    if (this.waitedFor.size > 1_000)
      for (const [id, at] of this.waitedFor)
        if (!isContended(at, now, this.settings.retryDelayMs)) this.waitedFor.delete(id);
  }

  private async acquire(taskId: string, deadline: number, previous: Hold | undefined): Promise<Hold> {
    // A spent or lost lease still in use: wait for its release (within the deadline; the attempt
    // below then fails fast if it is still held).
    if (previous) await settledWithin(previous.dropped, deadline - Date.now());
    const yieldUntil = this.yieldUntil.get(taskId);
    if (yieldUntil !== undefined) {
      this.yieldUntil.delete(taskId);
      await sleep(Math.min(yieldUntil, deadline) - Date.now());
    }
    for (;;) {
      // Watch for a release announcement before trying, so that one landing while the attempt is
      // in flight is not missed.
      const released = this.channels.watchRelease(taskId);
      try {
        const lock = await this.redlock.acquire([this.keys.lock(taskId)], this.settings.leaseMs);
        return this.startHold(taskId, lock);
      } catch (error) {
        if (!(error instanceof ExecutionError)) throw error;
        const waitLeft = deadline - Date.now();
        if ((await quorumUnreachable(error)) || waitLeft <= 0) {
          throw new LockUnavailableError(taskId, Math.max(0, waitLeft));
        }
        this.channels.announceWaiting(taskId); // the holder hands on after its batch
        // Wait for the holder's release announcement; the retry delay only covers a lost one or an expiry.
        const delay = this.settings.retryDelayMs * (1 + Math.random());
        await settledWithin(released.announced, Math.min(delay, waitLeft));
      } finally {
        released.stop();
      }
    }
  }

  private startHold(taskId: string, lock: Lock): Hold {
    let markDropped = () => undefined as void;
    const dropped = new Promise<void>((resolve) => (markDropped = resolve));
    const hold: Hold = {
      lock,
      lost: false,
      uses: 0,
      active: 0,
      retiring: false,
      expiryTimer: undefined,
      extendTimer: setInterval(() => void this.extend(taskId, hold), Math.floor(this.settings.leaseMs / 3)),
      dropped,
      markDropped,
    };
    hold.extendTimer.unref();
    hold.expiryTimer = this.expiryTimer(hold);
    this.holds.set(taskId, hold);
    return hold;
  }

  // Marks the lease lost at its own expiry if no extension moved it (for example after the process
  // was paused): the write then refuses to commit.
  private expiryTimer(hold: Hold): NodeJS.Timeout {
    const timer = setTimeout(() => (hold.lost = true), hold.lock.expiration - Date.now());
    timer.unref();
    return timer;
  }

  private async extend(taskId: string, hold: Hold): Promise<void> {
    if (hold.active === 0) {
      // Kept for a local waiter that never came: give it back.
      await this.drop(taskId, hold);
      return;
    }
    if (hold.lost || hold.lock.expiration <= Date.now()) {
      hold.lost = true;
      return;
    }
    try {
      hold.lock = await hold.lock.extend(this.settings.leaseMs);
      clearTimeout(hold.expiryTimer);
      hold.expiryTimer = this.expiryTimer(hold);
    } catch (error) {
      this.logger.warn(
        { taskId, err: (error as Error).message },
        "lock lease could not be extended; the write will not commit",
      );
      hold.lost = true;
    }
  }

  private async afterUse(taskId: string, hold: Hold): Promise<void> {
    if (--hold.active > 0) return; // the last write running under the lease decides
    // Kept while local writers queue for it; their obtain() decides whether the batch goes on.
    const kept = this.local.waiting(taskId) > 0 && !hold.retiring && !hold.lost;
    if (!kept) await this.drop(taskId, hold);
  }

  // Gives the lease back (once; a hold that is no longer the task's current one is left alone).
  private async drop(taskId: string, hold: Hold): Promise<void> {
    if (this.holds.get(taskId) !== hold) return;
    this.holds.delete(taskId);
    clearInterval(hold.extendTimer);
    clearTimeout(hold.expiryTimer);
    // The release script goes out to every node now; the announcement queues right behind it on the
    // same connections, so a waiter it wakes finds the key already gone (one round trip, not two).
    // Only a lease another replica said it waits for is announced: an uncontended write publishes
    // nothing (a waiter whose word came too late retries after its retry delay).
    const released = hold.lock.release();
    if (this.contended(taskId)) this.channels.announceReleased(taskId);
    try {
      await released;
    } catch (error) {
      // The write already committed (or rolled back); the lease simply expires. Never the caller's problem.
      this.logger.warn(
        { taskId, err: (error as Error).message },
        "lock release failed; the lease will expire",
      );
    } finally {
      hold.markDropped();
    }
  }
}

// True when too few nodes answered for any quorum (as opposed to the lock being held elsewhere).
async function quorumUnreachable(error: ExecutionError): Promise<boolean> {
  const last = error.attempts[error.attempts.length - 1];
  if (!last) return false;
  const stats = await last;
  let unreachable = 0;
  for (const reason of stats.votesAgainst.values())
    if (!(reason instanceof ResourceLockedError)) unreachable++;
  return stats.membershipSize - unreachable < stats.quorumSize;
}
