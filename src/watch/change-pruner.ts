import type { Logger } from "pino";
import { every, yieldToEventLoop } from "../background/periodic";
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

/**
 * How much one pass may do: rows per statement, statements per pass, and time per pass. What is
 * left waits for the next pass, so a backlog (a replica that was down, a lowered retention) is
 * worked off over several intervals instead of holding the database and the event loop.
 */
export interface PruneBounds {
  readonly batch: number;
  readonly maxStatements: number;
  readonly maxPassMs: number;
}

export const DEFAULT_PRUNE_BOUNDS: PruneBounds = Object.freeze({
  batch: 1_000,
  maxStatements: 20,
  maxPassMs: 500,
});

/** What one pass deleted, and whether it stopped at its bounds with work left. */
export interface PruneOutcome {
  readonly deleted: number;
  readonly statements: number;
  readonly complete: boolean;
}

/**
 * Prunes the change history in the background, outside any write's lock and transaction: changes
 * older than the age limit (every replica, in batches), and each task this replica wrote to since
 * the last pass down to its newest versions. Wraps the notifier to learn which tasks were written.
 * Each statement deletes at most one batch, and the pass yields to the event loop after each one:
 * serving is never starved, whatever the backlog (better-sqlite3 answers synchronously).
 */
export class ChangePruner implements ChangeNotifier {
  private readonly written = new Set<string>();
  private readonly timer: { stop(): void };
  private running: Promise<PruneOutcome> | null = null;

  constructor(
    private readonly store: Pick<PlanStore, "pruneChangesBefore" | "pruneTaskChanges">,
    private readonly next: ChangeNotifier,
    private readonly retention: ChangeRetention,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
    private readonly bounds: PruneBounds = DEFAULT_PRUNE_BOUNDS,
    private readonly pruned: (rows: number) => void = () => undefined,
  ) {
    this.timer = every(retention.intervalMs, () => this.prune());
  }

  changed(taskId: string, change: ChangeRecord | null): void {
    if (change !== null && this.retention.maxVersions > 0) this.written.add(taskId);
    this.next.changed(taskId, change);
  }

  /** One pruning pass (also run by the timer; a call during a pass waits for it and runs its own). */
  async prune(): Promise<PruneOutcome> {
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.pass();
    try {
      return await this.running;
    } finally {
      this.running = null;
    }
  }

  private async pass(): Promise<PruneOutcome> {
    const { batch, maxStatements, maxPassMs } = this.bounds;
    const started = performance.now();
    let deleted = 0;
    let statements = 0;
    const withinBounds = () => statements < maxStatements && performance.now() - started < maxPassMs;
    const run = async (statement: () => Promise<number>) => {
      const rows = await statement();
      statements += 1;
      deleted += rows;
      this.pruned(rows);
      await yieldToEventLoop();
      return rows;
    };
    let complete = true;
    try {
      // Each task written since the last pass, down to its newest versions.
      // A task written again meanwhile is added back by changed(); one left over (bounds, a full
      // batch, a failure) is put back here.
      const tasks = [...this.written];
      this.written.clear();
      try {
        while (tasks.length > 0 && withinBounds()) {
          const taskId = tasks[0] as string;
          const rows = await run(() =>
            this.store.pruneTaskChanges(taskId, this.retention.maxVersions, batch),
          );
          if (rows < batch) tasks.shift();
        }
      } finally {
        for (const taskId of tasks) this.written.add(taskId);
      }
      // Then every change past the age limit, oldest first, one batch at a time.
      if (this.retention.maxAgeMs > 0) {
        const olderThan = new Date(this.clock().getTime() - this.retention.maxAgeMs);
        let rows = batch;
        while (rows >= batch && withinBounds())
          rows = await run(() => this.store.pruneChangesBefore(olderThan, batch));
        if (rows >= batch) complete = false;
      }
      if (this.written.size > 0 && this.retention.maxVersions > 0) complete = false;
    } catch (error) {
      complete = false;
      this.logger.warn({ err: error }, "pruning plan changes failed; retrying at the next pass");
    }
    if (!complete)
      this.logger.debug({ deleted, statements }, "pruning pass reached its bounds; continuing next pass");
    return { deleted, statements, complete };
  }

  stop(): void {
    this.timer.stop();
  }
}
