import { statSync } from "node:fs";
import type { DataSource } from "typeorm";

/**
 * What reads the size of an SQLite database's write-ahead log file (`<database file>-wal`) when
 * called: its bytes, 0 when there is no such file (SQLite deletes it when the last connection
 * closes), or null when it cannot be read (a failed stat leaves the gauge as it was rather than
 * failing the scrape). Null itself for MySQL and for an in-memory database, which have no such
 * file.
 *
 * The file is not the log's length: SQLite starts a checkpointed log over from the start of the
 * file without truncating it (wal-checkpointer.ts), so the file stays at the largest the log ever
 * grew to while the service runs. A file that keeps growing is a log that is not being started
 * over: a reader holding its snapshot, or checkpoints that fail.
 */
export function walFileBytes(dataSource: DataSource): (() => number | null) | null {
  const file = dataSource.options.database;
  if (
    dataSource.options.type !== "better-sqlite3" ||
    typeof file !== "string" ||
    file === "" ||
    file === ":memory:"
  )
    return null;
  const wal = `${file}-wal`;
  return () => {
    try {
      return statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
    } catch {
      return null;
    }
  };
}
