import type { ChecklistCounter } from "../ports/checklist-counter";
import type { Logger } from "pino";
import type { Caller } from "../../auth/caller";
import type { TaskLock } from "../ports/task-lock";
import type { PlanStore } from "../ports/plan-store";
import type { CommittedWrite, ReadKind } from "../ports/records";
import type { LockLease } from "../ports/task-lock";
import { StorageCorruptionError } from "../ports/store-errors";
import type { WriteKind, WriteMetrics } from "../ports/write-metrics";
import { planErrors } from "../errors";
import type { CommitListener } from "./events";
import type { HistoryBudget } from "./history-budget";
import { TaskWorkspaces } from "./reach";
import { PreparationStale, type Write, type WriteCommand, type WriteSnapshot } from "./write-command";
import { writeUnderLock } from "./locked-step";

/** How many times a prepared write (a stale merge) prepares before it is WRITE_CONFLICT. */
export const PREPARE_ATTEMPTS = 8;

/** Settings of the serialized write path. */
export interface WritePipelineSettings {
  readonly coalesceWindowMs: number;
  readonly lockWaitMs: number;
  readonly historyBudget: HistoryBudget;
}

/** Who asks for a write, and until when they wait (epoch ms, Infinity for no deadline). */
export interface WriteCall {
  readonly caller: Caller;
  readonly deadline: number;
  /**
   * Told once the write committed how many bytes of plan text it stored (0 for a remembered retry
   * or a restore of the current plan): the edge charges them to the caller's write budget.
   */
  readonly stored?: ((bytes: number) => void) | undefined;
}

/** What the edge passes with a write: the caller's deadline and where to report what it stored. */
export type WriteOptions = Partial<Omit<WriteCall, "caller">>;

/** The pipeline's call from a caller and the edge's options (no deadline: Infinity). */
export function writeCall(caller: Caller, options: WriteOptions): WriteCall {
  return { caller, deadline: options.deadline ?? Infinity, stored: options.stored };
}

/**
 * Runs every plan write the same way (invariants 1-3 of DESIGN.md): early reach -> a refusal the
 * request carried -> per-task lock -> one transaction -> the work under the lock (locked-step.ts:
 * one locking read of what the command declared, reach on the locked task, remembered answer, pure
 * decision, its fenced commit with the request to remember, history budget) -> transaction commit
 * -> the listeners (change notification, pruning, events), each told of the commit. A decision or a
 * check that throws rolls the transaction back: nothing changes, and no listener hears of it.
 */
export class WritePipeline {
  private readonly taskWorkspaces = new TaskWorkspaces();

  constructor(
    private readonly deps: {
      readonly store: PlanStore;
      readonly lock: TaskLock;
      /** Post-commit work, in order: each is told of every commit once it is durable. */
      readonly listeners: readonly CommitListener[];
      readonly settings: WritePipelineSettings;
      readonly clock: () => Date;
      readonly newId: () => string;
      /** Counts each written content's checklist (src/threads/checklist-thread.ts). */
      readonly checklist: ChecklistCounter;
      readonly logger: Logger;
      readonly metrics: WriteMetrics;
    },
  ) {}

  /** Runs a write in the serialized region of its task, for a caller who must reach the task. */
  async execute<R>(write: Write<R>, call: WriteCall): Promise<R> {
    const { store, settings, metrics } = this.deps;
    const { taskId } = write;
    // Reach is checked before anything else about the task (AC-TASKS-PLAN-APPEND-001.7); the check
    // under the lock is the one that counts, this one answers early and discloses nothing.
    const reaching = this.taskWorkspaces.reachForWrite(store, call.caller, taskId);
    if (reaching) await reaching;
    if ("refusal" in write) throw write.refusal;
    const { kind } = write;
    try {
      const run = () =>
        this.underLock(taskId, call, (lease) => {
          // The decision's inputs are taken once the task's rows are locked (writeUnderLock), so the
          // times of one task's writes never go back, even with two of them in flight under a lease.
          const env = () => ({
            now: this.deps.clock(),
            coalesceWindowMs: settings.coalesceWindowMs,
            historyBudget: settings.historyBudget,
            newId: this.deps.newId,
            checklist: this.deps.checklist,
          });
          const locked = { caller: call.caller, lease, env };
          return store.inTransaction((tx) => writeUnderLock(tx, write, locked));
        });
      const outcome = write.prepare ? await this.prepared(write, run) : await run();
      if ("unchanged" in outcome) {
        metrics.write(kind, "unchanged");
        return outcome.unchanged;
      }
      metrics.write(kind, "committed");
      call.stored?.(outcome.storedBytes);
      metrics.storedBytes(outcome.storedBytes);
      if (outcome.stored) {
        metrics.planSize(outcome.stored.planBytes);
        metrics.revision(outcome.stored.coalesced);
      }
      this.publish(taskId, outcome.commit);
      return outcome.result;
    } catch (error) {
      metrics.write(kind, "failed");
      // A stored plan whose size does not match its row cannot be appended to
      // (AC-TASKS-PLAN-APPEND-003.5): reported as the command says, and logged at the edge (with the
      // task and both sizes) as every PLAN_READ_FAILED is.
      if (write.readFailed && error instanceof StorageCorruptionError) throw write.readFailed(error);
      throw error;
    }
  }

  /**
   * `work` under the task's lease: the wait bounded by the configuration and by the caller's
   * deadline, whichever is sooner; the lock wait and the time under the lease measured, whether it
   * committed or rolled back.
   */
  private async underLock<T>(
    taskId: string,
    call: WriteCall,
    work: (lease: LockLease) => Promise<T>,
  ): Promise<T> {
    const { lock, settings, metrics } = this.deps;
    const asked = performance.now();
    let obtained = false;
    let txStarted = 0;
    try {
      const waitMs = Math.min(settings.lockWaitMs, call.deadline - Date.now() - 50);
      if (waitMs <= 0) throw planErrors.lockUnavailable();
      const done = await lock.withLock(taskId, waitMs, (lease) => {
        obtained = true;
        metrics.lockWait((performance.now() - asked) / 1000, true);
        txStarted = performance.now();
        return work(lease);
      });
      metrics.transaction((performance.now() - txStarted) / 1000, "committed");
      return done;
    } catch (error) {
      if (!obtained) metrics.lockWait((performance.now() - asked) / 1000, false);
      else metrics.transaction((performance.now() - txStarted) / 1000, "rolled_back");
      throw error;
    }
  }

  /**
   * Runs a write that is not a decision on one locked plan (ImportTask writes a whole task) in the
   * same serialized region as every other write of its task: the task's lock (the same wait rule and
   * deadline), `work` under its lease (which runs its own transaction and returns what it
   * committed, null for nothing), then the listeners told of the commit. A `work` that throws has
   * committed nothing, and no listener hears of it.
   */
  async exclusive<R>(
    taskId: string,
    kind: WriteKind,
    call: WriteCall,
    work: (lease: LockLease) => Promise<{ readonly result: R; readonly commit: CommittedWrite | null }>,
  ): Promise<R> {
    try {
      const done = await this.underLock(taskId, call, work);
      this.deps.metrics.write(kind, done.commit === null ? "unchanged" : "committed");
      if (done.commit !== null) this.publish(taskId, done.commit);
      return done.result;
    } catch (error) {
      this.deps.metrics.write(kind, "failed");
      throw error;
    }
  }

  /**
   * `run` (the write under its lock) after the command's preparation (a stale merge's diffs, in
   * slices: issue 54), which runs before the lock on a read of its own, so that it holds neither the
   * task's lock nor a database connection, and several writers' merges of one task run side by side.
   * When a write landed between that read and the transaction (the decision throws
   * PreparationStale, nothing written), it prepares again on the new state: PREPARE_ATTEMPTS times
   * in all, then the write is ABORTED WRITE_CONFLICT (retriable), never merged in one piece.
   */
  private async prepared<T, R>(write: WriteCommand<ReadKind, R>, run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      await write.prepare?.(await this.snapshot(write));
      try {
        return await run();
      } catch (error) {
        if (!(error instanceof PreparationStale)) throw error;
        if (attempt >= PREPARE_ATTEMPTS) throw planErrors.writeConflict();
      }
    }
  }

  // What a preparation reads (null: the read failed, and the decision computes what it needs).
  private async snapshot<R>(write: WriteCommand<ReadKind, R>): Promise<WriteSnapshot | null> {
    if (write.contentAt === undefined) return null;
    try {
      const read = await this.deps.store.readPlanChanges(write.taskId, write.contentAt, 1);
      return { live: read.head && !read.head.deleted ? read.head : null, atVersion: read.since };
    } catch {
      return null;
    }
  }

  private publish(taskId: string, commit: CommittedWrite): void {
    for (const listener of this.deps.listeners) {
      try {
        listener.committed(taskId, commit);
      } catch (error) {
        // The write is committed; a failing listener must not turn it into an error.
        this.deps.logger.error({ taskId, err: error }, "post-commit work failed");
      }
    }
  }
}
