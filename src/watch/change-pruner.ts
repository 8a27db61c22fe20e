import type { Logger } from "pino";
import { setTimeout as sleep } from "node:timers/promises";
import { every, yieldToEventLoop } from "../background/periodic";
import type { CommitListener } from "../plans/pipeline/events";
import type { PlanStore } from "../plans/ports/plan-store";
import type { CommittedWrite } from "../plans/ports/records";

/** Retention of the change history. */
export interface ChangeRetention {
  /** 0: no age limit. */
  readonly maxAgeMs: number;
  /** 0: no per-task limit. */
  readonly maxVersions: number;
  readonly intervalMs: number;
}

/**
 * How much one pass may do: rows per statement, statements per pass for each of the two rules,
 * and time per pass. What is left waits for the next pass, so a backlog (a replica that was down,
 * a lowered retention, many tasks written) is worked off over several intervals instead of holding
 * the database and the event loop.
 */
export interface PruneBounds {
  readonly batch: number;
  /** Statements of the age rule per pass (each deletes at most `batch` rows, every task's). */
  readonly maxAgeStatements: number;
  /** Statements of the per-task rule per pass (one per task written since the last pass). */
  readonly maxTaskStatements: number;
  readonly maxPassMs: number;
  /**
   * After each statement the pass rests this many times the statement's own duration before the
   * next one (0: only a yield to the event loop), so pruning takes at most 1 / (1 + restRatio) of
   * the time while a pass runs. The rest counts towards `maxPassMs`.
   */
  readonly restRatio: number;
}

/** For a database server (MySQL): the statements run there, beside the event loop. */
export const DEFAULT_PRUNE_BOUNDS: PruneBounds = Object.freeze({
  batch: 1_000,
  maxAgeStatements: 20,
  maxTaskStatements: 500,
  maxPassMs: 500,
  restRatio: 0,
});

/**
 * For the embedded database (SQLite): better-sqlite3 runs each statement, its commit and any WAL
 * checkpoint on the event loop, so a read that arrives meanwhile waits for all of it. Small
 * statements, and a rest after each, keep pruning to a fifth of a pass's time (bench:scale
 * measures GetPlan during a prune): up to 4,000 rows a pass, 5.7 million a day at the default interval.
 */
export const EMBEDDED_PRUNE_BOUNDS: PruneBounds = Object.freeze({
  batch: 200,
  maxAgeStatements: 20,
  maxTaskStatements: 500,
  maxPassMs: 500,
  restRatio: 4,
});

/** What one pass deleted, and whether it stopped at its bounds with work left. */
export interface PruneOutcome {
  readonly deleted: number;
  readonly statements: number;
  readonly complete: boolean;
}

/**
 * Prunes the change history in the background, outside any write's lock and transaction: changes
 * older than the age limit (every replica's, in batches), and of each task this replica wrote to
 * since the last pass, the changes older than its newest `maxVersions` versions (the newest version
 * is what this replica wrote: another replica's later writes only keep more). Listens to the write
 * pipeline's commits to learn which tasks were written. Each statement deletes at most one batch and the pass yields to
 * the event loop after each one (and rests, as its bounds say): serving is never starved, whatever
 * the backlog (better-sqlite3 answers synchronously). Each rule has its own bounds and half of the
 * pass's time to begin with, so neither starves the other.
 */
export class ChangePruner implements CommitListener {
  /** Task -> the newest version this replica wrote since it was last pruned. */
  private readonly written = new Map<string, number>();
  private readonly timer: { stop(): void };
  private running: Promise<PruneOutcome> | null = null;

  constructor(
    private readonly store: Pick<PlanStore, "pruneChangesBefore" | "pruneTaskChanges">,
    private readonly retention: ChangeRetention,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
    private readonly bounds: PruneBounds = DEFAULT_PRUNE_BOUNDS,
    private readonly pruned: (rows: number) => void = () => undefined,
    /** Told how each pass ended (timer or call): a pass that was not `complete` left work for the next. */
    private readonly passed: (outcome: PruneOutcome) => void = () => undefined,
  ) {
    this.timer = every(retention.intervalMs, () => this.prune());
  }

  committed(taskId: string, commit: CommittedWrite): void {
    if ("change" in commit && commit.change !== null && this.retention.maxVersions > 0)
      this.written.set(taskId, Math.max(commit.change.version, this.written.get(taskId) ?? 0));
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
    const { batch, maxPassMs } = this.bounds;
    const started = performance.now();
    let deleted = 0;
    let statements = 0;
    const run = async (statement: () => Promise<number>) => {
      const began = performance.now();
      const rows = await statement();
      statements += 1;
      deleted += rows;
      this.pruned(rows);
      await yieldToEventLoop();
      if (this.bounds.restRatio > 0)
        await sleep((performance.now() - began) * this.bounds.restRatio, undefined, { ref: false });
      return rows;
    };
    let complete = true;
    try {
      // The age rule first, in at most half the pass's time (it bounds every task's history)...
      if (this.retention.maxAgeMs > 0) {
        const olderThan = new Date(this.clock().getTime() - this.retention.maxAgeMs);
        let rows = batch;
        for (let n = 0; rows >= batch && n < this.bounds.maxAgeStatements; n++) {
          if (n > 0 && performance.now() - started >= maxPassMs / 2) break;
          rows = await run(() => this.store.pruneChangesBefore(olderThan, batch));
        }
        if (rows >= batch) complete = false;
      }
      // ...then each written task, in what is left of it (and at least one task per pass).
      complete = (await this.pruneWritten(run, started)) && complete;
    } catch (error) {
      complete = false;
      this.logger.warn({ err: error }, "pruning plan changes failed; retrying at the next pass");
    }
    if (!complete)
      this.logger.debug({ deleted, statements }, "pruning pass reached its bounds; continuing next pass");
    const outcome = { deleted, statements, complete };
    this.passed(outcome);
    return outcome;
  }

  // Returns whether every written task was pruned. A task written again meanwhile is added back by
  // committed(); one left over (bounds, a full batch, a failure) is put back here.
  private async pruneWritten(run: (statement: () => Promise<number>) => Promise<number>, started: number) {
    const { batch, maxPassMs, maxTaskStatements } = this.bounds;
    const tasks = [...this.written];
    this.written.clear();
    let n = 0;
    try {
      while (
        tasks.length > 0 &&
        n < maxTaskStatements &&
        (n === 0 || performance.now() - started < maxPassMs)
      ) {
        const [taskId, newest] = tasks[0] as [string, number];
        const upTo = newest - this.retention.maxVersions;
        if (upTo < 1) {
          tasks.shift(); // not yet more versions than are kept
          continue;
        }
        n += 1;
        const rows = await run(() => this.store.pruneTaskChanges(taskId, upTo, batch));
        if (rows < batch) tasks.shift();
      }
    } finally {
      for (const [taskId, newest] of tasks)
        this.written.set(taskId, Math.max(newest, this.written.get(taskId) ?? 0));
    }
    return tasks.length === 0;
  }

  stop(): void {
    this.timer.stop();
  }
}
