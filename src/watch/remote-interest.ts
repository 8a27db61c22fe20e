/**
 * The tasks other replicas said their watchers follow, each until its announcement expires (they
 * repeat it while they watch). A hint, like every message between replicas: a task missing here
 * only means its changes are not announced, and the watcher's replica then finds them by polling.
 */
export class RemoteInterest {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Another replica said it watches these tasks. */
  heard(taskIds: readonly string[]): void {
    const until = this.now() + this.ttlMs;
    for (const taskId of taskIds) this.until.set(taskId, until);
  }

  /** Whether some other replica watches the task (as of its last announcement that has not expired). */
  has(taskId: string): boolean {
    const until = this.until.get(taskId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(taskId);
    return false;
  }

  /** Forgets every expired announcement. */
  sweep(): void {
    const now = this.now();
    for (const [taskId, until] of this.until) if (until <= now) this.until.delete(taskId);
  }
}
