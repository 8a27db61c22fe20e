import {
  CommitOutcomeUnknownError,
  StorageConflictError,
  StorageUnavailableError,
} from "../plans/ports/store-errors";

/** Classifies driver errors into the failures plans/ declares (plans/ports/store-errors.ts). */

// MySQL/MariaDB errnos: deadlock, lock wait timeout, NOWAIT, MariaDB "record changed", duplicate key.
const CONFLICT_ERRNOS = new Set([1213, 1205, 3572, 1020, 1062]);
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  "ER_CLIENT_INTERACTION_TIMEOUT",
  "ER_ACCESS_DENIED_ERROR",
  "ER_BAD_DB_ERROR",
  "SQLITE_BUSY",
  "SQLITE_CANTOPEN",
]);
// MySQL errnos for a server going away or refusing work (4031: MySQL 8 closed a session idle past
// its wait_timeout, e.g. a write whose holder stopped acting: transaction.ts sessionBounds).
// Galera: 1047 is a node out of the primary component or not yet synced refusing every statement
// ("WSREP has not yet prepared node for application use"); 1180, a COMMIT it could not replicate.
// At a COMMIT either leaves the outcome unknown (classifyCommitFailure): the write-set may have
// reached the primary component before the node lost it.
const UNAVAILABLE_ERRNOS = new Set([
  1040, 1053, 1077, 1078, 1079, 1080, 2002, 2003, 2006, 2013, 1927, 4031, 1047, 1180,
]);

/** Maps a driver error to StorageConflictError / StorageUnavailableError, or returns it unchanged. */
export function classifyStorageError(error: unknown): unknown {
  if (
    error instanceof StorageConflictError ||
    error instanceof StorageUnavailableError ||
    error instanceof CommitOutcomeUnknownError
  )
    return error;
  const driver = driverErrorOf(error);
  const code = typeof driver.code === "string" ? driver.code : "";
  const errno = typeof driver.errno === "number" ? driver.errno : -1;
  if (
    CONFLICT_ERRNOS.has(errno) ||
    code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    code === "SQLITE_CONSTRAINT_UNIQUE"
  ) {
    return new StorageConflictError(`write conflict (${code || errno})`, { cause: error });
  }
  if (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_ERRNOS.has(errno) || isPoolClosed(error)) {
    return new StorageUnavailableError(`database unavailable (${code || errno || "closed"})`, {
      cause: error,
    });
  }
  return error;
}

/**
 * Classifies the failure of the round trip that carried a write's COMMIT (on MySQL its deferred rows
 * and the COMMIT travel in one query, COMMIT last but for the session's settings after it).
 *
 * - The server refused a statement (a conflict, any SQL error): the query stopped there, before the
 *   COMMIT ran, so nothing was committed; classified as any other failure. (A lost fence never gets
 *   here: transaction.ts refuses it as a StorageConflictError.)
 * - The connection was found closed before the query could be sent (mysql2's closed state): nothing
 *   reached the server, and the session it had is gone with its transaction: StorageUnavailableError.
 * - Anything else that ended the connection or the session while the query was out (a reset, a lost
 *   connection, a timeout, the server crashing, shutting down or killing the session: an error
 *   mysql2 marks fatal, or an errno of a server going away) may have come after the server committed:
 *   CommitOutcomeUnknownError. Saying "unknown" for a query stopped before its COMMIT is safe; saying
 *   "nothing written" for one that committed is not (issue 54, defect 11).
 */
export function classifyCommitFailure(error: unknown): unknown {
  const classified = classifyStorageError(error);
  if (neverSent(error)) return classified;
  const fatal = (driverErrorOf(error) as { fatal?: unknown }).fatal === true;
  if (!fatal && !(classified instanceof StorageUnavailableError)) return classified;
  const driver = driverErrorOf(error);
  const code = typeof driver.code === "string" ? driver.code : "";
  const errno = typeof driver.errno === "number" ? driver.errno : -1;
  return new CommitOutcomeUnknownError(`commit sent, no answer (${code || errno || "connection lost"})`, {
    cause: error,
  });
}

// mysql2's answer to a statement given to a connection that had already ended: never sent.
function neverSent(error: unknown): boolean {
  const message = error instanceof Error ? error.message : "";
  return /Can't add new command when connection is in closed state/.test(message);
}

function driverErrorOf(error: unknown): { code?: unknown; errno?: unknown } {
  if (typeof error !== "object" || error === null) return {};
  const withDriver = error as { driverError?: unknown; code?: unknown; errno?: unknown };
  if (typeof withDriver.driverError === "object" && withDriver.driverError !== null) {
    return withDriver.driverError as { code?: unknown; errno?: unknown };
  }
  return withDriver;
}

function isPoolClosed(error: unknown): boolean {
  const message = error instanceof Error ? error.message : "";
  return /Pool is closed|connection is in closed state|Can't add new command when connection is in closed state|database connection is not open/i.test(
    message,
  );
}
