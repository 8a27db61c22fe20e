import { randomUUID } from "node:crypto";
import { ExecutionError, type Lock, Redlock, ResourceLockedError } from "@sesamecare-oss/redlock";
import Redis from "ioredis";
import type { Logger } from "pino";
import { InProcessTaskLock } from "./in-process-task-lock";
import { redisKeys } from "./redis-keys";
import { type LockLease, LockUnavailableError, type TaskLock } from "./task-lock";

/** Settings of the distributed lock (see Config.redis). */
export interface RedlockSettings {
  readonly urls: readonly string[];
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly retryDelayMs: number;
  readonly maxBatch: number;
}

// A Redis lease this process holds for one task, possibly across several local writes.
interface Hold {
  lock: Lock;
  readonly controller: AbortController;
  /** Writes started under this lease in the current batch (at most maxBatch). */
  uses: number;
  /** Writes running under it right now (at most PIPELINE_DEPTH). */
  active: number;
  /** Set once the lease is to be handed on: no further write may start under it. */
  retiring: boolean;
  /** When another replica last said it waits for this task (ms since the epoch). */
  contendedAt: number;
  expiryTimer: NodeJS.Timeout;
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
 * Releases are announced, so waiters wake at once. The lease is extended while held; if it is lost
 * the lease signal aborts. Correctness never rests on the lease: the database fence does.
 */
export class RedlockTaskLock implements TaskLock {
  private readonly local = new InProcessTaskLock(PIPELINE_DEPTH);
  private readonly holds = new Map<string, Hold>();
  private readonly acquiring = new Map<string, Promise<Hold>>();
  private readonly yieldUntil = new Map<string, number>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly keys: ReturnType<typeof redisKeys>;
  private readonly instanceId = randomUUID();

  private constructor(
    private readonly redlock: Redlock,
    private readonly clients: readonly Redis[],
    private readonly subscribers: readonly Redis[],
    private readonly settings: RedlockSettings,
    private readonly logger: Logger,
  ) {
    this.keys = redisKeys(settings.keyPrefix);
    for (const subscriber of subscribers) {
      subscriber.on("message", (channel: string, message: string) => this.heard(channel, message));
      // Subscribes on every (re)connection. ioredis's own resubscribe is off: its promise has no
      // handler, so closing a reconnecting subscriber rejected it unhandled ("Connection is closed.").
      subscriber.on("ready", () => {
        subscriber.subscribe(this.keys.released(), this.keys.waiting()).catch(() => undefined);
      });
    }
  }

  /**
   * Connects one ioredis client per node and waits (at most STARTUP_WAIT_MS) until a quorum is
   * ready, so the first writes after start-up do not fail for connections still opening. Commands
   * fail fast while a node is down (no offline queue); without a quorum the service still starts
   * (reads work, writes fail LOCK_UNAVAILABLE until a quorum is back).
   */
  static async connect(settings: RedlockSettings, logger: Logger): Promise<RedlockTaskLock> {
    const clients = settings.urls.map((url) => {
      const client = new Redis(url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2_000,
        // On close, a socket that died with its node never reports closing; don't wait 2 s for it.
        disconnectTimeout: 200,
        retryStrategy: (times) => Math.min(times * 100, 1_000),
      });
      let down = false;
      client.on("error", (error: Error) => {
        if (!down) logger.warn({ node: safeUrl(url), err: error.message }, "redis node unreachable");
        down = true;
      });
      client.on("ready", () => {
        if (down) logger.info({ node: safeUrl(url) }, "redis node reachable again");
        down = false;
      });
      return client;
    });
    // Retries are ours (bounded by the wait), so Redlock makes a single attempt per call.
    const redlock = new Redlock(clients, {
      retryCount: 0,
      driftFactor: 0.01,
      automaticExtensionThreshold: 0,
    });
    redlock.on("error", () => undefined); // expected contention; failures surface through acquire
    const subscribers = clients.map((client) => {
      const subscriber = client.duplicate({
        enableOfflineQueue: true,
        maxRetriesPerRequest: null,
        autoResubscribe: false, // the constructor subscribes on every "ready"
      });
      subscriber.on("error", () => undefined); // the command client logs node outages
      return subscriber;
    });
    const lock = new RedlockTaskLock(redlock, clients, subscribers, settings, logger);
    if (!(await quorumReady(clients, STARTUP_WAIT_MS)))
      logger.warn("no Redis quorum at start-up; writes fail with LOCK_UNAVAILABLE until one is back");
    return lock;
  }

  async withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const deadline = Date.now() + waitMs;
    return this.local.withLock(taskId, waitMs, async () => {
      const hold = await this.obtain(taskId, deadline);
      try {
        return await work({ signal: hold.controller.signal });
      } finally {
        await this.afterUse(taskId, hold);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.holds].map(([taskId, hold]) => this.drop(taskId, hold)));
    // Close gracefully: QUIT is answered after every command queued before it. Then disconnect,
    // which also stops a client that is reconnecting: its QUIT is refused (no offline queue), and
    // Redlock.quit() would leave it retrying forever. Every command still queued then has a handler.
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

  // Whether a held lease may take one more local write. A spent batch starts over while no other
  // replica waits (no hand-off for nobody); otherwise the lease retires: it is handed on once the
  // writes in flight under it finish, and this replica yields before asking again.
  private reusable(taskId: string, hold: Hold): boolean {
    if (!hold.retiring && !hold.controller.signal.aborted) {
      if (hold.uses < this.settings.maxBatch) return true;
      if (Date.now() - hold.contendedAt > this.contentionMemoryMs()) {
        hold.uses = 0;
        return true;
      }
      hold.retiring = true;
      this.yieldUntil.set(taskId, Date.now() + HANDOFF_YIELD_MS);
    }
    // Retiring or lost: the last write in flight gives it back, or nobody is left to.
    if (hold.active === 0) void this.drop(taskId, hold);
    return false;
  }

  // A waiting replica re-announces itself at every attempt, at least every 2 retry delays.
  private contentionMemoryMs(): number {
    return Math.max(50, 4 * this.settings.retryDelayMs);
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
      const released = this.watchRelease(taskId);
      try {
        const lock = await this.redlock.acquire([this.keys.lock(taskId)], this.settings.leaseMs);
        return this.startHold(taskId, lock);
      } catch (error) {
        if (!(error instanceof ExecutionError)) throw error;
        const waitLeft = deadline - Date.now();
        if ((await quorumUnreachable(error)) || waitLeft <= 0) {
          throw new LockUnavailableError(taskId, Math.max(0, waitLeft));
        }
        this.announce(this.keys.waiting(), `${this.instanceId} ${taskId}`); // the holder hands on after its batch
        // Wait for the holder's release announcement; the retry delay only covers a lost one or an expiry.
        const delay = this.settings.retryDelayMs * (1 + Math.random());
        await settledWithin(released.announced, Math.min(delay, waitLeft));
      } finally {
        released.stop();
      }
    }
  }

  private startHold(taskId: string, lock: Lock): Hold {
    const controller = new AbortController();
    let markDropped = () => undefined as void;
    const dropped = new Promise<void>((resolve) => (markDropped = resolve));
    const hold: Hold = {
      lock,
      controller,
      uses: 0,
      active: 0,
      retiring: false,
      contendedAt: 0,
      expiryTimer: this.expiryTimer(controller, lock),
      extendTimer: setInterval(() => void this.extend(taskId, hold), Math.floor(this.settings.leaseMs / 3)),
      dropped,
      markDropped,
    };
    hold.extendTimer.unref();
    this.holds.set(taskId, hold);
    return hold;
  }

  // Aborts the lease signal at the lease's own expiry if no extension moved it (for example after
  // the process was paused): the write then refuses to commit.
  private expiryTimer(controller: AbortController, lock: Lock): NodeJS.Timeout {
    const timer = setTimeout(
      () => controller.abort(new Error("lock lease expired")),
      lock.expiration - Date.now(),
    );
    timer.unref();
    return timer;
  }

  private async extend(taskId: string, hold: Hold): Promise<void> {
    if (hold.active === 0) {
      // Kept for a local waiter that never came: give it back.
      await this.drop(taskId, hold);
      return;
    }
    if (hold.controller.signal.aborted || hold.lock.expiration <= Date.now()) {
      hold.controller.abort(new Error("lock lease expired"));
      return;
    }
    try {
      hold.lock = await hold.lock.extend(this.settings.leaseMs);
      clearTimeout(hold.expiryTimer);
      hold.expiryTimer = this.expiryTimer(hold.controller, hold.lock);
    } catch (error) {
      this.logger.warn(
        { taskId, err: (error as Error).message },
        "lock lease could not be extended; the write will not commit",
      );
      hold.controller.abort(new Error("lock lease lost"));
    }
  }

  private async afterUse(taskId: string, hold: Hold): Promise<void> {
    if (--hold.active > 0) return; // the last write running under the lease decides
    // Kept while local writers queue for it; their obtain() decides whether the batch goes on.
    const kept = this.local.waiting(taskId) > 0 && !hold.retiring && !hold.controller.signal.aborted;
    if (!kept) await this.drop(taskId, hold);
  }

  private watchRelease(taskId: string): { readonly announced: Promise<void>; readonly stop: () => void } {
    const wakers = this.wakers.get(taskId) ?? new Set<() => void>();
    this.wakers.set(taskId, wakers);
    let wake = () => undefined as void;
    const announced = new Promise<void>((resolve) => (wake = resolve));
    wakers.add(wake);
    const stop = () => {
      wakers.delete(wake);
      if (wakers.size === 0 && this.wakers.get(taskId) === wakers) this.wakers.delete(taskId);
    };
    return { announced, stop };
  }

  private heard(channel: string, message: string): void {
    if (channel === this.keys.released()) return this.wake(message);
    const [instance, taskId] = [message.slice(0, 36), message.slice(37)];
    const hold = this.holds.get(taskId);
    if (hold && instance !== this.instanceId) hold.contendedAt = Date.now();
  }

  private wake(taskId: string): void {
    for (const wake of this.wakers.get(taskId) ?? []) wake();
  }

  // Gives the lease back (once; a hold that is no longer the task's current one is left alone).
  private async drop(taskId: string, hold: Hold): Promise<void> {
    if (this.holds.get(taskId) !== hold) return;
    this.holds.delete(taskId);
    clearInterval(hold.extendTimer);
    clearTimeout(hold.expiryTimer);
    // The release script goes out to every node now; the announcement queues right behind it on the
    // same connections, so a waiter it wakes finds the key already gone (one round trip, not two).
    const released = hold.lock.release();
    this.announce(this.keys.released(), taskId);
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

  private announce(channel: string, taskId: string): void {
    for (const client of this.clients) client.publish(channel, taskId).catch(() => undefined);
  }
}

// Waits for `promise` (its outcome ignored) or `ms`, whichever comes first. Unlike a race with
// sleep(), the timer is cleared when the promise wins, so nothing outlives the wait (lingering timers
// of up to PLAN_LOCK_WAIT_MS kept processes, Jest workers among them, from exiting).
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))));
  await Promise.race([promise.then(noop, noop), timeout]);
  clearTimeout(timer);
}

const noop = () => undefined;

// QUIT, then disconnect; at most `ms` for a node that never answers.
async function quitWithin(client: Redis, ms: number): Promise<void> {
  await settledWithin(client.quit(), ms);
  client.disconnect();
}

// Resolves true once a majority of the clients is ready, false after `ms`.
function quorumReady(clients: readonly Redis[], ms: number): Promise<boolean> {
  const quorum = Math.floor(clients.length / 2) + 1;
  const enough = () => clients.filter((client) => client.status === "ready").length >= quorum;
  if (enough()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      for (const client of clients) client.off("ready", check);
      resolve(ok);
    };
    const check = () => {
      if (enough()) done(true);
    };
    const timer = setTimeout(() => done(false), ms);
    for (const client of clients) client.on("ready", check);
  });
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

function safeUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}
