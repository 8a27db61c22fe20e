import type { ChecklistCounter } from "../ports/checklist-counter";
import type {
  HeadRecord,
  HistoryUsage,
  LockedHead,
  LockedRevision,
  PlanCommit,
  ReadKind,
  RevisionRecord,
  VersionContent,
} from "../ports/records";
import type { StorageCorruptionError } from "../ports/store-errors";
import type { WriteKind } from "../ports/write-metrics";
import { PlanError } from "../errors";
import type { HistoryBudget } from "./history-budget";
import type { RequestKey } from "./idempotency";

/**
 * What a write reads inside the serialized region (the same read its commit is fenced on): with
 * the contents when its command asked for them (`K`), or only the metadata.
 */
export interface WriteState<K extends ReadKind = ReadKind> {
  readonly taskId: string;
  /** HEAD row, tombstone included; null when the task never had a plan. */
  readonly head: LockedHead<K> | null;
  /** The live plan: HEAD unless it is absent or a tombstone. */
  readonly live: LockedHead<K> | null;
  /** Newest revision of the task; its number is MAX(revision_number). */
  readonly latest: LockedRevision<K> | null;
  /** What the task's history holds before the write (the history budget). */
  readonly history: HistoryUsage;
  /** The content at the version the command asked for (`contentAt`; a merge's base), else null. */
  readonly atVersion: VersionContent | null;
}

/** The state a write decides on, from what its locking read found (the live plan derived once). */
export function writeState<K extends ReadKind>(
  taskId: string,
  read: Pick<WriteState<K>, "head" | "latest" | "history"> & { readonly atVersion?: VersionContent | null },
): WriteState<K> {
  const { head, latest, history } = read;
  const atVersion = read.atVersion ?? null;
  return { taskId, head, live: head && !head.deleted ? head : null, latest, history, atVersion };
}

/**
 * Thrown by a decision whose preparation (WriteCommand.prepare) read another state of the task than
 * the transaction did (a write landed in between): nothing is written, and the pipeline prepares
 * again. Never reaches a caller.
 */
export class PreparationStale extends Error {
  constructor() {
    super("the write was prepared on a state of the task that is no longer current");
    this.name = "PreparationStale";
  }
}

/** What `prepare` sees: the live plan and the content at `contentAt`, read before the lock. */
export interface WriteSnapshot {
  readonly live: HeadRecord | null;
  readonly atVersion: VersionContent;
}

/** Inputs of a write that are not in the request: time, settings, id generation. */
export interface WriteEnv {
  readonly now: Date;
  readonly coalesceWindowMs: number;
  readonly historyBudget: HistoryBudget;
  readonly newId: () => string;
  /** Counts the checklist of the content a write stores (off the event loop when it is large). */
  readonly checklist: ChecklistCounter;
  /**
   * The stored HEAD content, read under the lock (checked against its recorded size), for a write
   * that read only metadata: an append whose checklist cannot be added to the stored one.
   */
  readonly storedContent: () => Promise<string>;
}

/** A decided write: its commit (what is published once it is durable derives from it), and its answer. */
export interface Decision<R> {
  readonly commit: PlanCommit;
  readonly result: R;
  /** What a content write stored (metrics). */
  readonly stored?: { readonly planBytes: number; readonly coalesced: boolean };
}

/** A decision as its transaction committed it, with the bytes of plan text its rows stored. */
export interface Committed<R> extends Decision<R> {
  readonly storedBytes: number;
}

/** A write that changes nothing (a restore of the current plan): its answer only. */
export interface Unchanged<R> {
  readonly unchanged: R;
}

/**
 * One write, as its use case declares it (pure data: no I/O, no caller): the task, what it reads
 * under the lock (`reads`, and a revision by id), the request it may be a retry of, and a pure
 * decision on what it read. The pipeline (write-pipeline.ts) reads exactly as `reads` says, so
 * `decide` receives the state type it declares; it throws a PlanError to refuse.
 */
export interface WriteCommand<K extends ReadKind, R> {
  readonly taskId: string;
  /** The use case, as the metrics count writes. */
  readonly kind: WriteKind;
  readonly reads: K;
  /** A revision of the task the decision needs, read under the lock (null when it does not exist). */
  readonly revisionId?: string;
  /** A past version whose content the decision needs (a merge's base), derived under the lock. */
  readonly contentAt?: number | undefined;
  readonly request?: RequestKey | undefined;
  /**
   * The error to report when the stored plan cannot be read (an append must say PLAN_READ_FAILED,
   * AC-TASKS-PLAN-APPEND-003.5). A metadata read then also checks the stored text before reporting
   * a rejection (AC-TASKS-PLAN-APPEND-001.7: a read failure comes before the size limit).
   */
  readonly readFailed?: (cause: StorageCorruptionError) => Error;
  /**
   * Work the decision may reuse, done before the lock and the transaction on a read of its own
   * when `contentAt` is set (stale-merge.ts premerge: a merge computed in slices, holding neither
   * the task's lock nor a database connection; issue 54); null when that read failed. Never a
   * rule: the decision still decides on what it reads in the transaction, and throws
   * PreparationStale when that is not what the preparation read.
   */
  readonly prepare?: (snapshot: WriteSnapshot | null) => Promise<void>;
  decide(
    state: WriteState<K>,
    env: WriteEnv,
    target: RevisionRecord | null,
  ): Decision<R> | Unchanged<R> | Promise<Decision<R> | Unchanged<R>>;
}

/**
 * A write whose request failed a check that is reported only after the task's reach (the order of
 * AC-TASKS-PLAN-APPEND-001.7: mode validity, then reach, then the fields): carried as a value to
 * the pipeline, which raises it once the caller is known to reach the task.
 */
export interface RefusedWrite {
  readonly taskId: string;
  readonly refusal: PlanError;
}

/** A write as a use case hands it to the pipeline. */
export type Write<R> = WriteCommand<ReadKind, R> | RefusedWrite;

/**
 * Builds a command from the checks that come after the task's reach (the order of
 * AC-TASKS-PLAN-APPEND-001.7: mode validity, then reach, then the fields): a rule's refusal
 * (PlanError) becomes a RefusedWrite, which the pipeline raises once the caller is known to reach
 * the task; any other error is a bug and propagates.
 */
export function afterReach<R>(taskId: string, build: () => WriteCommand<ReadKind, R>): Write<R> {
  try {
    return build();
  } catch (error) {
    if (error instanceof PlanError) return { taskId, refusal: error };
    throw error;
  }
}
