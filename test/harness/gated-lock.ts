import { InProcessTaskLock } from "../../src/locking/in-process-task-lock";
import type { LockLease, TaskLock } from "../../src/plans/ports/task-lock";

/**
 * A real lock (in-process by default, or any TaskLock such as Redlock) with a gate: while closed, a write that obtained the lock waits inside
 * it, so tests can force overlaps and drain scenarios deterministically. `loseLease` hands work a
 * lease that is already lost (as a Redlock lease would be after expiry).
 */
export class GatedLock implements TaskLock {
  constructor(private readonly inner: TaskLock = new InProcessTaskLock()) {}

  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  private enteredWaiters: (() => void)[] = [];
  loseLease = false;
  /** Writes that asked for the lock. */
  arrived = 0;
  /** Writes that obtained it. */
  entered = 0;
  /** The lease each write that obtained the lock was given, in order (to await its loss). */
  readonly leases: LockLease[] = [];
  private arrivedWaiters: (() => void)[] = [];

  /** Writes that obtain the lock from now on wait inside it until open(). */
  hold(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  open(): void {
    this.openGate?.();
    this.gate = null;
  }

  /** Resolves once `count` writes have obtained the lock in total. */
  async untilEntered(count: number): Promise<void> {
    while (this.entered < count) await new Promise<void>((resolve) => this.enteredWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.open();
    await this.inner.close();
  }

  /** Resolves once `count` writes have asked for the lock in total. */
  async untilArrived(count: number): Promise<void> {
    while (this.arrived < count) await new Promise<void>((resolve) => this.arrivedWaiters.push(resolve));
  }

  withLock<T>(taskId: string, waitMs: number, work: (lease: LockLease) => Promise<T>): Promise<T> {
    this.arrived++;
    for (const wake of this.arrivedWaiters.splice(0)) wake();
    return this.inner.withLock(taskId, waitMs, async (lease) => {
      this.entered++;
      this.leases.push(lease);
      for (const wake of this.enteredWaiters.splice(0)) wake();
      if (this.gate) await this.gate;
      return work(this.loseLease ? { signal: AbortSignal.abort() } : lease);
    });
  }
}
