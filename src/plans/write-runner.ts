import type { Logger } from "pino";
import type { TaskLock } from "./ports/task-lock";
import type { PlanMetrics } from "../observability/metrics";
import type { PlanStore, PlanWriteTx } from "./ports/plan-store";
import type { ChangeContent, ChangeRecord, LockedState, TaskRecord } from "./ports/records";
import { StorageConflictError, StorageCorruptionError } from "./ports/store-errors";
import { decodeReplay, encodeReplay, REQUEST_ID_RETENTION_MS, type RequestKey } from "./idempotency";
import { planErrors } from "./errors";
import type { ChangeNotifier, EventSink, PlanEvent } from "./events";
import { translateFailure } from "./failures";
import type { HistoryBudget, HistoryGrowth } from "./history-budget";
import { HistoryCheck } from "./history-check";
import type { WriteEnv, WriteState } from "./write-context";

/** Any commit: what to write and which events to publish once it is durable. */
export interface Commit<R> {
  readonly apply: (tx: PlanWriteTx) => Promise<void>;
  readonly events: readonly PlanEvent[];
  /**
   * The change recorded in the same transaction (none for a write that changes no plan), and how its
   * row holds the content after it.
   */
  readonly change?: { readonly record: ChangeRecord; readonly content: ChangeContent } | undefined;
  readonly result: R;
  /** What the commit stored, for metrics and the history budget (absent when it stored no content). */
  readonly stored?: {
    readonly planBytes: number;
    readonly coalesced: boolean;
    readonly history: HistoryGrowth;
  };
}

/** Settings of the serialized write path. */
export interface WriteRunnerSettings {
  readonly coalesceWindowMs: number;
  readonly lockWaitMs: number;
  readonly historyBudget: HistoryBudget;
}

/**
 * Runs every plan write the same way (invariants 1-3 of DESIGN.md): per-task lock -> one
 * transaction -> locking read of the task row and HEAD -> pure decision -> fenced writes ->
 * commit -> events after commit. A decision that throws rolls the transaction back: nothing
 * changes.
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

  /**
   * Runs `decide` in the serialized region of `taskId`. `headReadFailed` is the error to report when
   * the HEAD cannot be read (an append must say PLAN_READ_FAILED, AC-TASKS-PLAN-APPEND-003.5).
   */
  async run<R>(
    taskId: string,
    decide: (state: WriteState, env: WriteEnv, tx: PlanWriteTx, task: TaskRecord) => Promise<Commit<R>>,
    options: {
      readonly headReadFailed?: (cause: StorageCorruptionError) => Error;
      readonly request?: RequestKey | undefined;
      /** False for an append: neither content is read (the database composes it). */
      readonly readContent?: boolean;
      /** The caller's deadline (epoch ms, Infinity for none): the lock wait ends before it. */
      readonly deadline?: number;
      /** Reach as the locked task row says (throws when the caller does not reach it, or it is gone). */
      readonly reach?: (task: TaskRecord | null) => void;
    } = {},
  ): Promise<R> {
    const { store, lock, settings, metrics } = this.deps;
    const asked = performance.now();
    let obtained = false;
    let txStarted = 0;
    try {
      // The wait is bounded by the configuration and by the caller's deadline, whichever is sooner.
      const waitMs = Math.min(settings.lockWaitMs, (options.deadline ?? Infinity) - Date.now() - 50);
      if (waitMs <= 0) throw planErrors.lockUnavailable();
      const commit = await lock.withLock(taskId, waitMs, (lease) => {
        obtained = true;
        metrics.lockWait((performance.now() - asked) / 1000, true);
        txStarted = performance.now();
        return store.inTransaction(async (tx) => {
          const locked = await this.lockForWrite(
            tx,
            taskId,
            options.readContent ?? true,
            options.headReadFailed,
          );
          options.reach?.(locked?.task ?? null);
          if (locked === null) throw planErrors.taskNotFound(taskId);
          const { task } = locked;
          const { request } = options;
          if (request) {
            // A retry of a remembered request returns the original result and writes nothing.
            const prior = await tx.findRequest(taskId, request.storedId);
            if (prior && prior.fingerprint !== request.fingerprint)
              throw planErrors.requestIdReused(request.id);
            if (prior)
              return { apply: async () => undefined, events: [], result: decodeReplay<R>(prior.result) };
          }
          const state: WriteState = { taskId, head: locked.head, latest: locked.latest };
          const env: WriteEnv = {
            now: this.deps.clock(),
            coalesceWindowMs: settings.coalesceWindowMs,
            newId: this.deps.newId,
          };
          const decided = await decide(state, env, tx, task).catch(async (error: unknown) => {
            // An append rejected here never read the stored plan: one that cannot be read is reported
            // first (AC-TASKS-PLAN-APPEND-001.7: read failure before the size limit).
            if (options.headReadFailed && !(options.readContent ?? true) && state.head && !state.head.deleted)
              await this.readingHead(options.headReadFailed, () => tx.verifyStoredContent(taskId));
            throw error;
          });
          const budget = await HistoryCheck.start(tx, settings.historyBudget, state, decided.stored?.history);
          const { change } = decided;
          // A write other than an append replaces the content older changes may be derived from.
          if (change && change.content.form !== "prefix" && state.head && !state.head.deleted)
            await tx.materializeChanges(taskId, state.head.version);
          await this.readingHead(options.headReadFailed, () => decided.apply(tx));
          if (change) await tx.recordChange(change.record, change.content);
          await budget?.finish(change?.record.version ?? 0);
          if (request) {
            await tx.rememberRequest(
              {
                taskId,
                requestId: request.storedId,
                fingerprint: request.fingerprint,
                result: encodeReplay(decided.result),
                createdAt: env.now,
              },
              new Date(env.now.getTime() - REQUEST_ID_RETENTION_MS),
            );
          }
          // The lease check is a courtesy; the fence (updateHead WHERE version = ?) is what holds.
          if (lease.signal.aborted) throw new StorageConflictError("lock lease lost before commit");
          return decided;
        });
      });
      metrics.transaction((performance.now() - txStarted) / 1000, "committed");
      if (commit.stored) {
        metrics.planSize(commit.stored.planBytes);
        metrics.revision(commit.stored.coalesced);
      }
      this.publish(taskId, commit.events, commit.change?.record ?? null);
      return commit.result;
    } catch (error) {
      if (!obtained) metrics.lockWait((performance.now() - asked) / 1000, false);
      else metrics.transaction((performance.now() - txStarted) / 1000, "rolled_back");
      throw translateFailure(error);
    }
  }

  private lockForWrite(
    tx: PlanWriteTx,
    taskId: string,
    readContent: boolean,
    headReadFailed?: (cause: StorageCorruptionError) => Error,
  ): Promise<LockedState | null> {
    return this.readingHead(headReadFailed, () => tx.lockForWrite(taskId, { content: readContent }));
  }

  // Runs a step that reads or checks the stored plan: a stored plan whose size does not match its
  // row cannot be appended to (AC-TASKS-PLAN-APPEND-003.5), and is reported as `headReadFailed`.
  private async readingHead<T>(
    headReadFailed: ((cause: StorageCorruptionError) => Error) | undefined,
    step: () => Promise<T>,
  ): Promise<T> {
    try {
      return await step();
    } catch (error) {
      // Logged where every PLAN_READ_FAILED is, at the edge (with the task and both sizes).
      if (headReadFailed && error instanceof StorageCorruptionError) throw headReadFailed(error);
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
