import type { Logger } from "pino";
import type { Caller } from "../auth/caller";
import type { TaskLock } from "./ports/task-lock";
import type { PlanMetrics } from "../observability/metrics";
import type { PlanStore, PlanWriteTx } from "./ports/plan-store";
import type { ChangeRecord, HistoryUsage, PlanCommit, ReadKind } from "./ports/records";
import { StorageConflictError, StorageCorruptionError } from "./ports/store-errors";
import { REQUEST_ID_RETENTION_MS } from "./idempotency";
import { planErrors } from "./errors";
import type { ChangeNotifier, EventSink, PlanEvent } from "./events";
import {
  checkHistoryBudget,
  type HistoryBudget,
  historyOverBudget,
  historyWithinBudget,
} from "./history-budget";
import { TaskWorkspaces, verifyReach } from "./reach";
import { type Decision, type Unchanged, type Write, type WriteCommand, writeState } from "./write-command";

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
}

/**
 * Runs every plan write the same way (invariants 1-3 of DESIGN.md): early reach -> a refusal the
 * request carried -> per-task lock -> one transaction -> one locking read of what the command
 * declared (task, HEAD, newest revision, history usage, target revision, remembered request) ->
 * reach on the locked task -> remembered answer -> pure decision -> `tx.commit(decision, request to
 * remember)` (fenced) -> history budget -> transaction commit -> events. A decision or a check that
 * throws rolls the transaction back: nothing changes.
 */
export class WritePipeline {
  private readonly taskWorkspaces = new TaskWorkspaces();

  constructor(
    private readonly deps: {
      readonly store: PlanStore;
      readonly lock: TaskLock;
      readonly events: EventSink;
      readonly changes: ChangeNotifier;
      readonly settings: WritePipelineSettings;
      readonly clock: () => Date;
      readonly newId: () => string;
      readonly logger: Logger;
      readonly metrics: PlanMetrics;
    },
  ) {}

  /** Runs a write in the serialized region of its task, for a caller who must reach the task. */
  async execute<R>(write: Write<R>, call: WriteCall): Promise<R> {
    const { store, lock, settings, metrics } = this.deps;
    const { taskId } = write;
    // Reach is checked before anything else about the task (AC-TASKS-PLAN-APPEND-001.7); the check
    // under the lock is the one that counts, this one answers early and discloses nothing.
    await this.taskWorkspaces.reachForWrite(store, call.caller, taskId);
    if ("refusal" in write) throw write.refusal;
    const asked = performance.now();
    let obtained = false;
    let txStarted = 0;
    try {
      // The wait is bounded by the configuration and by the caller's deadline, whichever is sooner.
      const waitMs = Math.min(settings.lockWaitMs, call.deadline - Date.now() - 50);
      if (waitMs <= 0) throw planErrors.lockUnavailable();
      const outcome = await lock.withLock(taskId, waitMs, (lease) => {
        obtained = true;
        metrics.lockWait((performance.now() - asked) / 1000, true);
        txStarted = performance.now();
        return store.inTransaction((tx) => this.underLock(tx, write, call.caller, lease.signal));
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
      // A stored plan whose size does not match its row cannot be appended to
      // (AC-TASKS-PLAN-APPEND-003.5): reported as the command says, and logged at the edge (with the
      // task and both sizes) as every PLAN_READ_FAILED is.
      if (write.readFailed && error instanceof StorageCorruptionError) throw write.readFailed(error);
      throw error;
    }
  }

  // In the transaction: the locking read the command declared, reach on the locked task, a
  // remembered answer, the decision on what was read, its commit (with the request it answers), and
  // the history budget on what the commit left. Returns the decision, or the remembered answer.
  private async underLock<K extends ReadKind, R>(
    tx: PlanWriteTx,
    command: WriteCommand<K, R>,
    caller: Caller,
    lease: AbortSignal,
  ): Promise<Decision<R> | Unchanged<R>> {
    const { taskId, request } = command;
    const what = { reads: command.reads, revisionId: command.revisionId, requestId: request?.storedId };
    const locked = await tx.read(taskId, what);
    verifyReach(caller, taskId, locked?.task ?? null);
    if (locked === null) throw planErrors.taskNotFound(taskId);
    const { history, remembered } = locked;
    if (request && remembered) {
      // A retry of a remembered request returns the original result and writes nothing.
      if (remembered.fingerprint !== request.fingerprint) throw planErrors.requestIdReused(request.id);
      return { unchanged: remembered.result as R };
    }
    const state = writeState(taskId, locked);
    const now = this.deps.clock();
    const env = { now, coalesceWindowMs: this.deps.settings.coalesceWindowMs, newId: this.deps.newId };
    let decided: Decision<R> | Unchanged<R>;
    try {
      decided = command.decide(state, env, locked.target);
    } catch (error) {
      // A rejection of a write that never read the stored plan: one that cannot be read is reported first.
      if (command.readFailed && command.reads === "metadata" && state.live)
        await tx.verifyStoredContent(taskId);
      throw error;
    }
    if ("unchanged" in decided) return decided;
    const remember = request
      ? {
          request: {
            taskId,
            requestId: request.storedId,
            fingerprint: request.fingerprint,
            result: decided.result,
            createdAt: now,
          },
          forgetBefore: new Date(now.getTime() - REQUEST_ID_RETENTION_MS),
        }
      : null;
    const after = await tx.commit(decided.commit, remember);
    await this.checkBudget(tx, decided.commit, history, after);
    // The lease check is a courtesy; the fences (HEAD's version, the revision's row version) hold.
    if (lease.aborted) throw new StorageConflictError("lock lease lost before commit");
    return decided;
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

  /** Publishes the events of a write that committed outside execute() (the implementation-started mark). */
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
