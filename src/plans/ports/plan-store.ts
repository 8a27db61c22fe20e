import type {
  ChangeContent,
  ChangeKey,
  ChangeRecord,
  HeadRecord,
  HeadWrite,
  LockedState,
  RevisionMeta,
  RevisionRecord,
  StoredChange,
  TaskRecord,
  WriteRequestRecord,
} from "./records";

/**
 * What the plan service needs from storage. Implemented by TypeOrmPlanStore for SQLite and MySQL.
 * Methods throw StorageConflictError or StorageUnavailableError (storage-errors.ts) for expected
 * failures; anything else is a bug or an unknown fault.
 */
export interface PlanStore {
  getTask(taskId: string): Promise<TaskRecord | null>;
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
  /**
   * Sets the implementation-started marker of a live plan unless already set (first mark wins),
   * without touching content, title or version. When it sets it, records `change(head after)` in the
   * same transaction. Returns the HEAD after and whether this call set the mark, or null without a
   * live plan.
   */
  markImplementationStarted(
    taskId: string,
    mark: { at: Date; by: string; sessionId: string },
    change: (marked: HeadRecord) => ChangeRecord,
  ): Promise<{ head: HeadRecord; marked: boolean } | null>;
  /** Up to `limit` changes of a task after `after`, in key order; with the plan content when asked. */
  readChanges(taskId: string, after: ChangeKey, limit: number, withContent: boolean): Promise<StoredChange[]>;
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
  /** Runs `work` in one write transaction: all its writes commit together or not at all. */
  inTransaction<T>(work: (tx: PlanWriteTx) => Promise<T>): Promise<T>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The writes of one transaction. Reads here are locking reads on MySQL. */
export interface PlanWriteTx {
  /**
   * The locking read every write starts with: the task, its HEAD (tombstone included) and newest
   * revision, in one statement (row locks on MySQL). Without `content` it reads neither text (an
   * append composes in the database), except the HEAD content of a row that has no trimmed lengths yet.
   * Null when the task does not exist. Throws StorageCorruptionError when a text it read does not
   * have its recorded size.
   */
  lockForWrite(taskId: string, options: { content: boolean }): Promise<LockedState | null>;
  /**
   * Checks the stored HEAD text against its recorded size without reading it out (the database
   * measures it); throws StorageCorruptionError on a mismatch.
   */
  verifyStoredContent(taskId: string): Promise<void>;
  /**
   * What the task's history holds (the history budget): how many revisions, and the UTF-8 bytes of
   * every stored copy of plan text in it, the revisions' and the change history's.
   */
  historyUsage(taskId: string): Promise<{ revisions: number; bytes: number }>;
  /**
   * Deletes the task's oldest change rows, oldest first and never one of a version at or after
   * `keepFromVersion`, until at least `bytes` of stored text are freed (or none is left). Returns
   * the bytes freed. A watch resuming from before them then ends WATCH_HISTORY_EXPIRED, as after
   * pruning by age.
   */
  trimChangeHistory(taskId: string, bytes: number, keepFromVersion: number): Promise<number>;
  /** A revision of this task. */
  findRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null>;
  /** Inserts the first HEAD row of a task (whole content). */
  insertHead(head: HeadWrite): Promise<void>;
  /**
   * The fence: updates HEAD only where its version is still `fenceVersion`, and throws
   * StorageConflictError unless exactly one row changed. An append (content given as a kept prefix
   * and a suffix) also requires the stored text to have its recorded size, and throws
   * StorageCorruptionError when it has not.
   */
  updateHead(head: HeadWrite, fenceVersion: number): Promise<void>;
  /**
   * Inserts a revision; without `content` it takes the HEAD content this transaction wrote (marked as
   * HEAD's with revision content at HEAD on, else copied by the database).
   */
  insertRevision(revision: RevisionMeta & { readonly content?: string }): Promise<void>;
  /** Rewrites the newest revision in place, fenced on its row version like updateHead (content as insertRevision). */
  updateRevision(
    revision: RevisionMeta & { readonly content?: string },
    fenceRowVersion: number,
  ): Promise<void>;
  /**
   * Records the change this transaction commits, its content held as `content` says (a copy is
   * made by the database from the HEAD this transaction wrote; the plan never crosses the wire).
   */
  recordChange(change: ChangeRecord, content: ChangeContent): Promise<void>;
  /**
   * Turns the `prefix` change rows of `version` into copies of the HEAD content, before a write
   * other than an append replaces that content (they could no longer be derived from it).
   */
  materializeChanges(taskId: string, version: number): Promise<void>;
  /**
   * Gives the task's newest revision, `newestNumber`, a copy of HEAD's content if it is marked as
   * holding it (only the newest revision ever is). Runs before a write moves HEAD past that
   * revision: one that starts a new revision, or deletes the plan.
   */
  detachRevisionContent(taskId: string, newestNumber: number): Promise<void>;
  /** Deletes the task, its HEAD, its revisions, its changes and its remembered requests. */
  deleteTask(taskId: string): Promise<void>;
  /** A remembered request of this task. */
  findRequest(taskId: string, requestId: string): Promise<WriteRequestRecord | null>;
  /** Remembers a request; forgets the task's requests created before `forgetBefore`. */
  rememberRequest(request: WriteRequestRecord, forgetBefore: Date): Promise<void>;
}
