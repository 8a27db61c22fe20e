/**
 * The per-task write lock. Every plan write for a task runs inside `withLock` (blocking, not
 * optimistic: seed 001 "Serialization dependency"). Holders of one task's lock never overlap across
 * lock instances (replicas); one instance may run a few of its own writes to the task under one
 * holding (the Redlock adapter runs two), whose transactions the database's locking read of the task
 * then serializes. So writes to one task are serialized by the lock and the row lock together. The
 * lock is an efficiency device; correctness under a lost lease rests on the database fence.
 */
export interface TaskLock {
  /**
   * Runs `work` while holding the lock of `taskId`, then releases it (also when `work` throws).
   * Rejects with LockUnavailableError, without running `work`, if the lock is not obtained within
   * `waitMs`.
   */
  withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T>;
  /** Releases resources (connections); later calls fail. */
  close(): Promise<void>;
}

/**
 * A held lock. A plain flag rather than an AbortSignal: nothing waits on the loss (the commit reads
 * it once, and the fence decides), and an AbortController costs about 3.6 µs to create, a sizeable
 * share of an append's own CPU (bench/RESULTS.md, 2026-12-05).
 */
export interface LockLease {
  /** True once the lease is lost while `work` runs (never, for the in-process lock). */
  readonly lost: boolean;
}

/** The lock was not obtained in time; nothing ran. */
export class LockUnavailableError extends Error {
  constructor(taskId: string, waitMs: number) {
    super(`lock for task ${taskId} not obtained within ${waitMs} ms`);
    this.name = "LockUnavailableError";
  }
}
