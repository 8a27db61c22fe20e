/**
 * The failures a PlanStore reports (plans/ declares them; storage/ classifies driver errors into
 * them, so that no driver detail reaches the service, let alone a caller).
 */

/** The write lost a race: fence mismatch, duplicate key, deadlock, lock wait timeout. Nothing was written. */
export class StorageConflictError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StorageConflictError";
  }
}

/**
 * The database could not be reached or dropped the connection before the write's COMMIT was sent:
 * nothing was written (a transaction whose session ends uncommitted is rolled back by the server).
 */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StorageUnavailableError";
  }
}

/**
 * The write's COMMIT was sent but its answer never came (the connection dropped, the server crashed,
 * was shut down or killed the session): the write may have been applied, or not. Distinct from
 * StorageUnavailableError, which means nothing was written.
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CommitOutcomeUnknownError";
  }
}

/** What failed an integrity check: whose content, and its recorded and measured UTF-8 sizes. */
export interface CorruptContent {
  readonly taskId: string;
  /** "plan" (the HEAD row) or "revision <id>". */
  readonly row: string;
  readonly recordedBytes: number;
  readonly storedBytes: number;
}

/** Stored data failed its integrity check (for example content shorter than its recorded size). */
export class StorageCorruptionError extends Error {
  constructor(readonly corrupt: CorruptContent) {
    super(`stored content of the ${corrupt.row} of task ${corrupt.taskId} does not match its recorded size`);
    this.name = "StorageCorruptionError";
  }
}
