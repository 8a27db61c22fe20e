import { StorageConflictError, StorageUnavailableError } from "../plans/ports/store-errors";

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
const UNAVAILABLE_ERRNOS = new Set([1040, 1053, 1077, 1078, 1079, 1080, 2002, 2003, 2006, 2013, 1927, 4031]);

/** Maps a driver error to StorageConflictError / StorageUnavailableError, or returns it unchanged. */
export function classifyStorageError(error: unknown): unknown {
  if (error instanceof StorageConflictError || error instanceof StorageUnavailableError) return error;
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
