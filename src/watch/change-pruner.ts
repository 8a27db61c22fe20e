import type { Logger } from "pino";
import type { ChangeNotifier } from "../plans/events";
import type { PlanStore } from "../plans/ports/plan-store";
import type { ChangeRecord } from "../plans/ports/records";

/** Retention of the change history. */
export interface ChangeRetention {
  /** 0: no age limit. */
  readonly maxAgeMs: number;
  /** 0: no per-task limit. */
  readonly maxVersions: number;
  readonly intervalMs: number;
}

const BATCH = 1_000;

/**
 * Prunes the change history in the background, outside any write's lock and transaction: changes
 * older than the age limit (every replica, in batches), and each task this replica wrote to since
 * the last run down to its newest versions. Wraps the notifier to learn which tasks were written.
 */
export class ChangePruner implements ChangeNotifier {
  private readonly written = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: Pick<PlanStore, "pruneChanges">,
    private readonly next: ChangeNotifier,
    private readonly retention: ChangeRetention,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.timer = setInterval(() => void this.prune(), retention.intervalMs);
    this.timer.unref();
  }

  changed(taskId: string, change: ChangeRecord | null): void {
    if (change !== null) this.written.add(taskId);
    this.next.changed(taskId, change);
  }

  /** One pruning pass (also run by the timer); returns the rows deleted. */
  async prune(): Promise<number> {
    if (this.running) await this.running;
    let deleted = 0;
    this.running = (async () => {
      const tasks = this.retention.maxVersions > 0 ? [...this.written] : [];
      this.written.clear();
      const olderThan =
        this.retention.maxAgeMs > 0 ? new Date(this.clock().getTime() - this.retention.maxAgeMs) : null;
      try {
        let batch = await this.store.pruneChanges({
          olderThan,
          tasks,
          keepVersions: this.retention.maxVersions,
          batch: BATCH,
        });
        deleted += batch;
        // More old rows than one batch: keep going, one batch at a time, without per-task work.
        while (olderThan !== null && batch >= BATCH) {
          batch = await this.store.pruneChanges({ olderThan, tasks: [], keepVersions: 0, batch: BATCH });
          deleted += batch;
        }
      } catch (error) {
        for (const taskId of tasks) this.written.add(taskId);
        this.logger.warn({ err: error }, "pruning plan changes failed; retrying at the next run");
      }
    })();
    await this.running;
    this.running = null;
    return deleted;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
