import { type LockLease, LockUnavailableError, type TaskLock } from "../plans/ports/task-lock";

interface Waiter {
  readonly grant: () => void;
}

interface Entry {
  holders: number;
  readonly waiters: Waiter[];
}

const NEVER_LOST: LockLease = { lost: false };

/**
 * A per-task mutex table for one process. Waiters are granted the lock first in, first out; an entry
 * exists only while the lock is held, so the table is empty when idle (no growth over an unbounded
 * key space). Different tasks never wait on each other.
 *
 * `slots` > 1 lets that many writers of one task in at once (a per-task semaphore); the Redlock
 * adapter uses it to pipeline writes whose order the database row lock then fixes.
 */
export class InProcessTaskLock implements TaskLock {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly slots = 1) {}

  async withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const waiting = this.acquire(taskId, waitMs);
    if (waiting) await waiting; // a free slot is taken at once, without a turn of the event loop
    try {
      return await work(NEVER_LOST);
    } finally {
      this.release(taskId);
    }
  }

  async close(): Promise<void> {}

  /** Writers queued (not holding) for the lock of `taskId`. */
  waiting(taskId: string): number {
    return this.entries.get(taskId)?.waiters.length ?? 0;
  }

  /** Number of tasks whose lock is held (for tests: 0 when idle). */
  get heldCount(): number {
    return this.entries.size;
  }

  // Null when a slot was free and is now taken; otherwise the wait for one.
  private acquire(taskId: string, waitMs: number): Promise<void> | null {
    const entry = this.entries.get(taskId);
    if (!entry) {
      this.entries.set(taskId, { holders: 1, waiters: [] });
      return null;
    }
    if (entry.holders < this.slots) {
      entry.holders++;
      return null;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const index = entry.waiters.indexOf(waiter);
        if (index >= 0) entry.waiters.splice(index, 1);
        reject(new LockUnavailableError(taskId, waitMs));
      }, waitMs);
      entry.waiters.push(waiter);
    });
  }

  private release(taskId: string): void {
    const entry = this.entries.get(taskId);
    if (!entry) return;
    const next = entry.waiters.shift();
    if (next)
      next.grant(); // the slot passes on
    else if (--entry.holders === 0) this.entries.delete(taskId);
  }
}
