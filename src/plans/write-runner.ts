import type { Logger } from "pino";
import type { TaskLock } from "./ports/task-lock";
import type { PlanMetrics } from "../observability/metrics";
import type { PlanStore, PlanWriteTx } from "./ports/plan-store";
import type {
  ChangeRecord,
  HistoryUsage,
  PlanCommit,
  ReadKind,
  RevisionRecord,
  TaskRecord,
} from "./ports/records";
import { StorageConflictError, StorageCorruptionError } from "./ports/store-errors";
import { decodeReplay, encodeReplay, REQUEST_ID_RETENTION_MS, type RequestKey } from "./idempotency";
import { planErrors } from "./errors";
import type { ChangeNotifier, EventSink, PlanEvent } from "./events";
import {
  checkHistoryBudget,
  type HistoryBudget,
  historyOverBudget,
  historyWithinBudget,
} from "./history-budget";
import type { Decision, WriteEnv, WriteState } from "./write-context";

/** A write that changes nothing (a restore of the current plan): its answer only. */
export interface Unchanged<R> {
  readonly unchanged: R;
}

/**
 * One write, as its use case declares it: what it reads under the lock (`reads`, and a revision by
 * id), the checks on the locked task, and a pure decision on what it read.
 */
export interface WriteCommand<K extends ReadKind, R> {
  readonly taskId: string;
  readonly reads: K;
  /** A revision of the task the decision needs, read under the lock (null when it does not exist). */
  readonly revisionId?: string;
  readonly request?: RequestKey | undefined;
  /** The caller's deadline (epoch ms, Infinity for none): the lock wait ends before it. */
  readonly deadline?: number;
  /** Reach as the locked task row says (throws when the caller does not reach it, or it is gone). */
  readonly reach?: (task: TaskRecord | null) => void;
  /**
   * The error to report when the stored plan cannot be read (an append must say PLAN_READ_FAILED,
   * AC-TASKS-PLAN-APPEND-003.5). A metadata read then also checks the stored text before reporting
   * a rejection (AC-TASKS-PLAN-APPEND-001.7: a read failure comes before the size limit).
   */
  readonly readFailed?: (cause: StorageCorruptionError) => Error;
  decide(state: WriteState<K>, env: WriteEnv, target: RevisionRecord | null): Decision<R> | Unchanged<R>;
}

/** A command of either read. */
export type AnyWriteCommand<R> = WriteCommand<"metadata", R> | WriteCommand<"content", R>;

/** Settings of the serialized write path. */
export interface WriteRunnerSettings {
  readonly coalesceWindowMs: number;
  readonly lockWaitMs: number;
  readonly historyBudget: HistoryBudget;
}

/**
 * Runs every plan write the same way (invariants 1-3 of DESIGN.md): per-task lock -> one
 * transaction -> locking read of the task, HEAD, newest revision and history usage -> pure
 * decision -> one commit of it (fenced) -> history budget -> transaction commit -> events. A
 * decision or a check that throws rolls the transaction back: nothing changes.
 */
export class WriteRunner {
  constructor(
    private readonly deps: {
      readonly store: PlanStore;
      readonly lock: TaskLock;
      readonly events: EventSink;
      readonly changes: ChangeNotifier;
      readonly settings: WriteRunnerSettings;
      readonly clock: () => Date;
      readonly newId: () => string;
      readonly logger: Logger;
      readonly metrics: PlanMetrics;
    },
  ) {}

  /** Runs a command in the serialized region of its task. */
  async run<R>(command: AnyWriteCommand<R>): Promise<R> {
    const { store, lock, settings, metrics } = this.deps;
    const { taskId } = command;
    const asked = performance.now();
    let obtained = false;
    let txStarted = 0;
    try {
      // The wait is bounded by the configuration and by the caller's deadline, whichever is sooner.
      const waitMs = Math.min(settings.lockWaitMs, (command.deadline ?? Infinity) - Date.now() - 50);
      if (waitMs <= 0) throw planErrors.lockUnavailable();
      const outcome = await lock.withLock(taskId, waitMs, (lease) => {
        obtained = true;
        metrics.lockWait((performance.now() - asked) / 1000, true);
        txStarted = performance.now();
        return store.inTransaction(async (tx) => {
          const outcome = await this.decideUnderLock(tx, command);
          if ("unchanged" in outcome) return outcome;
          const { decision, state, env } = outcome;
          const after = await this.reading(command, () => tx.commit(decision.commit));
          await this.checkBudget(tx, decision.commit, state.history, after);
          const { request } = command;
          if (request) {
            await tx.rememberRequest(
              {
                taskId,
                requestId: request.storedId,
                fingerprint: request.fingerprint,
                result: encodeReplay(decision.result),
                createdAt: env.now,
              },
              new Date(env.now.getTime() - REQUEST_ID_RETENTION_MS),
            );
          }
          // The lease check is a courtesy; the fences (HEAD's version, the revision's row version) hold.
          if (lease.signal.aborted) throw new StorageConflictError("lock lease lost before commit");
          return decision;
        });
      });
      metrics.transaction((performance.now() - txStarted) / 1000, "committed");
      if ("unchanged" in outcome) return outcome.unchanged;
      if (outcome.stored) {
        metrics.planSize(outcome.stored.planBytes);
        metrics.revision(outcome.stored.coalesced);
      }
      this.publish(taskId, outcome.events, "change" in outcome.commit ? outcome.commit.change : null);
      return outcome.result;
    } catch (error) {
      if (!obtained) metrics.lockWait((performance.now() - asked) / 1000, false);
      else metrics.transaction((performance.now() - txStarted) / 1000, "rolled_back");
      throw error;
    }
  }

  // The locking read, the checks on the locked task, a remembered answer, the decision.
  private async decideUnderLock<R>(
    tx: PlanWriteTx,
    command: AnyWriteCommand<R>,
  ): Promise<
    Unchanged<R> | { readonly decision: Decision<R>; readonly state: WriteState; readonly env: WriteEnv }
  > {
    const { taskId, request } = command;
    const locked = await this.reading(command, () => tx.lockForWrite(taskId, command.reads));
    command.reach?.(locked?.task ?? null);
    if (locked === null) throw planErrors.taskNotFound(taskId);
    if (request) {
      // A retry of a remembered request returns the original result and writes nothing.
      const prior = await tx.findRequest(taskId, request.storedId);
      if (prior && prior.fingerprint !== request.fingerprint) throw planErrors.requestIdReused(request.id);
      if (prior) return { unchanged: decodeReplay<R>(prior.result) };
    }
    const state: WriteState = { taskId, head: locked.head, latest: locked.latest, history: locked.history };
    const env: WriteEnv = {
      now: this.deps.clock(),
      coalesceWindowMs: this.deps.settings.coalesceWindowMs,
      newId: this.deps.newId,
    };
    // The target is read under the lock, so it is the row as of this write.
    const target =
      command.revisionId === undefined ? null : await tx.findRevision(taskId, command.revisionId);
    try {
      // The state was read as command.reads says, so it holds the contents the command decides on.
      const decide = command.decide as (
        s: WriteState,
        e: WriteEnv,
        t: RevisionRecord | null,
      ) => Decision<R> | Unchanged<R>;
      const decided = decide(state, env, target);
      return "unchanged" in decided ? decided : { decision: decided, state, env };
    } catch (error) {
      // A rejection of a write that never read the stored plan: one that cannot be read is reported first.
      if (command.readFailed && command.reads === "metadata" && state.head && !state.head.deleted)
        await this.reading(command, () => tx.verifyStoredContent(taskId));
      throw error;
    }
  }

  /**
   * Refuses the write (HISTORY_QUOTA_EXCEEDED) if it took the history past the budget, after the
   * change history yielded what it could (the task's oldest change rows before the write's own),
   * and after a recount confirmed the kept figures.
   */
  private async checkBudget(
    tx: PlanWriteTx,
    commit: PlanCommit,
    before: HistoryUsage,
    after: HistoryUsage,
  ): Promise<void> {
    const budget = this.deps.settings.historyBudget;
    // Only a content write is held to it: a delete always goes through (it is how a task recovers).
    if (commit.kind !== "content" || historyWithinBudget(budget, before, after)) return;
    const { taskId, version } = commit.change;
    let usage = after;
    const excess = historyOverBudget(budget, usage);
    if (excess > 0) usage = await tx.yieldChangeHistory(taskId, excess, version);
    if (!historyWithinBudget(budget, before, usage)) usage = await tx.recountHistory(taskId);
    checkHistoryBudget(budget, before, usage);
  }

  // Runs a step that reads or checks the stored plan: a stored plan whose size does not match its
  // row cannot be appended to (AC-TASKS-PLAN-APPEND-003.5), and is reported as the command says.
  private async reading<T, R>(command: AnyWriteCommand<R>, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      // Logged where every PLAN_READ_FAILED is, at the edge (with the task and both sizes).
      if (command.readFailed && error instanceof StorageCorruptionError) throw command.readFailed(error);
      throw error;
    }
  }

  /** Publishes the events of a write that committed outside run() (the implementation-started mark). */
  publishCommitted(taskId: string, events: readonly PlanEvent[], change: ChangeRecord | null): void {
    this.publish(taskId, events, change);
  }

  private publish(taskId: string, events: readonly PlanEvent[], change: ChangeRecord | null): void {
    try {
      this.deps.changes.changed(taskId, change);
      this.deps.events.publish(taskId, events);
    } catch (error) {
      // The write is committed; a failing sink must not turn it into an error.
      this.deps.logger.error({ taskId, err: error }, "event publication failed");
    }
  }
}
