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
  uses: number;
  inUse: boolean;
  expiryTimer: NodeJS.Timeout;
  readonly extendTimer: NodeJS.Timeout;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

// After a batch, a replica with more local writes pauses this long before re-acquiring, so that a
// replica woken by the release announcement gets the lock first (fairness across replicas).
const HANDOFF_YIELD_MS = 2;

/**
 * The per-task lock across replicas: Redlock over independent Redis nodes, behind a per-process
 * queue so that one waiter per replica contends in Redis. A replica keeps the lease for the writes
 * queued locally (up to maxBatch in a row, then it yields so another replica gets its turn), which
 * saves a Redis round trip per write under contention. The lease is extended while held; if it is
 * lost the lease signal aborts. Correctness never rests on the lease: the database fence does.
 */
export class RedlockTaskLock implements TaskLock {
  private readonly local = new InProcessTaskLock();
  private readonly holds = new Map<string, Hold>();
  private readonly yieldUntil = new Map<string, number>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly keys: ReturnType<typeof redisKeys>;

  private constructor(
    private readonly redlock: Redlock,
    private readonly clients: readonly Redis[],
    private readonly subscribers: readonly Redis[],
    private readonly settings: RedlockSettings,
    private readonly logger: Logger,
  ) {
    this.keys = redisKeys(settings.keyPrefix);
    for (const subscriber of subscribers) {
      subscriber.on("message", (_channel: string, taskId: string) => this.wake(taskId));
      // ioredis resubscribes after a reconnect.
      subscriber.subscribe(this.keys.released()).catch(() => undefined);
    }
  }

  /** Connects one ioredis client per node. Commands fail fast while a node is down (no offline queue). */
  static connect(settings: RedlockSettings, logger: Logger): RedlockTaskLock {
    const clients = settings.urls.map((url) => {
      const client = new Redis(url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2_000,
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
      const subscriber = client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
      subscriber.on("error", () => undefined); // the command client logs node outages
      return subscriber;
    });
    return new RedlockTaskLock(redlock, clients, subscribers, settings, logger);
  }

  async withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const deadline = Date.now() + waitMs;
    return this.local.withLock(taskId, waitMs, async () => {
      const hold = await this.obtain(taskId, deadline);
      hold.inUse = true;
      try {
        return await work({ signal: hold.controller.signal });
      } finally {
        hold.inUse = false;
        await this.afterUse(taskId, hold);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.holds.keys()].map((taskId) => this.drop(taskId)));
    // Close gracefully: QUIT is answered after every command queued before it, including the
    // resubscribe ioredis sends by itself after a reconnect with no handler attached (which an abrupt
    // disconnect() would reject). Capped at 1 s for a node that is down.
    await Promise.all(
      this.subscribers.map(async (subscriber) => {
        await Promise.race([subscriber.quit().catch(() => undefined), sleep(1_000)]);
        subscriber.disconnect();
      }),
    );
    await this.redlock.quit().catch(() => undefined);
  }

  private async obtain(taskId: string, deadline: number): Promise<Hold> {
    const kept = this.holds.get(taskId);
    if (kept && !kept.controller.signal.aborted) {
      kept.uses++;
      return kept;
    }
    const yieldUntil = this.yieldUntil.get(taskId);
    if (yieldUntil !== undefined) {
      this.yieldUntil.delete(taskId);
      await sleep(Math.min(yieldUntil, deadline) - Date.now());
    }
    for (;;) {
      try {
        const lock = await this.redlock.acquire([this.keys.lock(taskId)], this.settings.leaseMs);
        return this.startHold(taskId, lock);
      } catch (error) {
        if (!(error instanceof ExecutionError)) throw error;
        const waitLeft = deadline - Date.now();
        if ((await quorumUnreachable(error)) || waitLeft <= 0) {
          throw new LockUnavailableError(taskId, Math.max(0, waitLeft));
        }
        // Wait for the holder's release announcement; the retry delay only covers a lost one or an expiry.
        const delay = this.settings.retryDelayMs * (1 + Math.random());
        await this.releasedOrAfter(taskId, Math.min(delay, waitLeft));
      }
    }
  }

  private startHold(taskId: string, lock: Lock): Hold {
    const controller = new AbortController();
    const hold: Hold = {
      lock,
      controller,
      uses: 1,
      inUse: false,
      expiryTimer: this.expiryTimer(controller, lock),
      extendTimer: setInterval(() => void this.extend(taskId, hold), Math.floor(this.settings.leaseMs / 3)),
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
    if (!hold.inUse) {
      // Kept for a local waiter that never came: give it back.
      if (this.holds.get(taskId) === hold) await this.drop(taskId);
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
    const waiting = this.local.waiting(taskId) > 0;
    if (waiting && !hold.controller.signal.aborted && hold.uses < this.settings.maxBatch) return;
    // Batch used up with local writers still queued: pause before re-acquiring so another replica goes first.
    if (waiting) this.yieldUntil.set(taskId, Date.now() + HANDOFF_YIELD_MS);
    await this.drop(taskId);
  }

  private releasedOrAfter(taskId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wakers = this.wakers.get(taskId) ?? new Set<() => void>();
      this.wakers.set(taskId, wakers);
      const done = () => {
        clearTimeout(timer);
        wakers.delete(done);
        if (wakers.size === 0 && this.wakers.get(taskId) === wakers) this.wakers.delete(taskId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakers.add(done);
    });
  }

  private wake(taskId: string): void {
    for (const done of [...(this.wakers.get(taskId) ?? [])]) done();
  }

  private async drop(taskId: string): Promise<void> {
    const hold = this.holds.get(taskId);
    if (!hold) return;
    this.holds.delete(taskId);
    clearInterval(hold.extendTimer);
    clearTimeout(hold.expiryTimer);
    try {
      await hold.lock.release();
    } catch (error) {
      // The write already committed (or rolled back); the lease simply expires. Never the caller's problem.
      this.logger.warn(
        { taskId, err: (error as Error).message },
        "lock release failed; the lease will expire",
      );
      return;
    }
    this.announce(this.keys.released(), taskId);
  }

  private announce(channel: string, taskId: string): void {
    for (const client of this.clients) client.publish(channel, taskId).catch(() => undefined);
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

function safeUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}
