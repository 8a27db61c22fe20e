import type {
  ChangeKey,
  ChangeRecord,
  HeadRecord,
  CommittedUsage,
  ImportOutcome,
  LockedState,
  PlanCommit,
  ReadKind,
  RevisionMeta,
  RevisionRecord,
  StoredChange,
  TaskBundle,
  TaskExportPage,
  ListedTask,
  TaskRecord,
  VersionContent,
  WriteRequestRecord,
} from "./records";

/**
 * What the plan service needs from storage. Implemented by TypeOrmPlanStore for SQLite and MySQL.
 * Methods throw StorageConflictError or StorageUnavailableError (storage-errors.ts) for expected
 * failures; anything else is a bug or an unknown fault.
 */
export interface PlanStore {
  getTask(taskId: string): Promise<TaskRecord | null>;
  /** A task, with its live plan's checklist progress (GetTask). */
  getListedTask(taskId: string): Promise<ListedTask | null>;
  /** Inserts a task; throws StorageConflictError when the id is taken. */
  createTask(task: TaskRecord): Promise<void>;
  /** Live (not deleted) HEAD of a task, or null. */
  getPlan(taskId: string): Promise<HeadRecord | null>;
  /** Revisions numbered below `beforeNumber` (all when null), newest first, at most `limit`. */
  listRevisions(taskId: string, beforeNumber: number | null, limit: number): Promise<RevisionMeta[]>;
  /** A revision of this task (task-scoped: another task's revision id gives null). */
  getRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null>;
  /** The HEAD row of a task, tombstone included (a watch's snapshot and resume point), or null. */
  getHead(taskId: string): Promise<HeadRecord | null>;
  /** Up to `limit` changes of a task after `after`, in key order; with the plan content when asked. */
  readChanges(taskId: string, after: ChangeKey, limit: number, withContent: boolean): Promise<StoredChange[]>;
  /**
   * What changed since `sinceVersion`, read in one snapshot: the HEAD row (tombstone included; null
   * when the task never had a plan), the content at `sinceVersion` (derived from the change history
   * when it is not HEAD's), and the newest `limit` changes after that version, in key order, without
   * content (`more`: older ones after it were left out).
   */
  readPlanChanges(
    taskId: string,
    sinceVersion: number,
    limit: number,
  ): Promise<{
    readonly head: HeadRecord | null;
    readonly since: VersionContent;
    readonly changes: readonly StoredChange[];
    readonly more: boolean;
  }>;
  /** The oldest version whose change is still recorded for the task, or null when none is. */
  oldestChangeVersion(taskId: string): Promise<number | null>;
  /** For each of these tasks that exists: its newest change key, or null when it has no change. */
  watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>>;
  /**
   * Deletes at most `limit` changes committed before `olderThan` (every task's, oldest first).
   * Returns the rows deleted, as the database counts them.
   */
  pruneChangesBefore(olderThan: Date, limit: number): Promise<number>;
  /**
   * Deletes at most `limit` of the task's changes of versions up to `upToVersion`, oldest first.
   * Returns the rows deleted, as the database counts them.
   */
  pruneTaskChanges(taskId: string, upToVersion: number, limit: number): Promise<number>;
  /**
   * Tasks in id order after `afterId`, at most `limit`: of `workspaceId` when given, and only of
   * `workspaces` unless that is "all".
   */
  listTasks(
    workspaces: ReadonlySet<string> | "all",
    workspaceId: string | null,
    afterId: string,
    limit: number,
  ): Promise<ListedTask[]>;
  /**
   * One page of a task's export, read in one snapshot (one transaction on MySQL): the task, its HEAD
   * (tombstone included) and its revisions numbered after `afterNumber`, with their contents, up to
   * about `maxBytes` of content (at least one). Null when the task does not exist.
   */
  exportPage(taskId: string, afterNumber: number, maxBytes: number): Promise<TaskExportPage | null>;
  /**
   * Imports a task in one write transaction (the caller holds the task's lock): locks the task's
   * row, reads what is stored of it (null: nothing), asks `judge.decide` (which may throw to
   * refuse), and on "created" or "overwritten" writes `bundle` (after deleting every row of the
   * stored task) with the change `judge.change` gives as its change history's first row, unless
   * `dryRun`. Returns the outcome and the change recorded (null when none was).
   */
  importTask(
    bundle: TaskBundle,
    judge: {
      readonly decide: (stored: TaskBundle | null) => Promise<ImportOutcome>;
      readonly change: () => ChangeRecord | null;
    },
    dryRun: boolean,
  ): Promise<{ outcome: ImportOutcome; change: ChangeRecord | null }>;
  /** Runs `work` in one write transaction: all its writes commit together or not at all. */
  inTransaction<T>(work: (tx: PlanWriteTx) => Promise<T>): Promise<T>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What a write reads under the lock, as its command declares it. */
export interface WriteReads<K extends ReadKind> {
  /** The texts too, or only the metadata. */
  readonly reads: K;
  /** A revision of the task, by id (the target of a restore or revert). */
  readonly revisionId?: string | undefined;
  /** A remembered request of the task, by its stored id (a retry is answered from it). */
  readonly requestId?: string | undefined;
  /** A past version whose content the decision needs (a merge's base), derived under the lock. */
  readonly contentAt?: number | undefined;
}

/** A request to remember with a write's commit. */
export interface Remember {
  readonly request: WriteRequestRecord;
  /** The task's requests created before this are forgotten. */
  readonly forgetBefore: Date;
}

/**
 * One write transaction, in the words of the write pipeline: one locking read of what the command
 * declared, which hands back the one commit of the decision. How a decision becomes rows is
 * storage's alone.
 */
export interface PlanWriteTx {
  /**
   * The locking read every write starts with: the task, its HEAD (tombstone included), its newest
   * revision and its history usage (row locks on MySQL), and what `what` asks for besides: the
   * target revision and the remembered request. A `metadata` read gives no text (an append composes
   * in the database); HEAD's trimmed lengths are always given (measured on the content of a row
   * written before they were recorded). Null when the task does not exist. Throws
   * StorageCorruptionError when a text it read does not have its recorded size.
   */
  read<K extends ReadKind>(taskId: string, what: WriteReads<K>): Promise<LockedWrite<K> | null>;
}

/** A task locked for one write: what its locking read found, and the commit fenced on it. */
export interface LockedWrite<K extends ReadKind = ReadKind> {
  readonly state: LockedState<K>;
  /**
   * Checks the stored HEAD text against its recorded size without reading it out (the database
   * measures it); throws StorageCorruptionError on a mismatch.
   */
  verifyStoredContent(): Promise<void>;
  /**
   * The stored HEAD text, read under the lock, checked against its recorded size
   * (StorageCorruptionError on a mismatch); "" when the task has no live plan.
   */
  storedContent(): Promise<string>;
  /**
   * Writes the decision on this task and remembers the request it answers. A content write's change
   * history yields to its allowance first: the task's oldest change rows (never one of this write's
   * version or later; a watch resuming from before them ends WATCH_HISTORY_EXPIRED, as after pruning
   * by age), then a recount of figures still past it. Throws StorageConflictError when a fence was
   * lost (nothing of it may then be committed), and StorageCorruptionError when an append's stored
   * text does not have its recorded size. Returns the task's history usage after it (`delete-task`:
   * none), which the caller holds to the budget, and the bytes the write stored.
   */
  commit(commit: PlanCommit, remember: Remember | null): Promise<CommittedUsage>;
}
