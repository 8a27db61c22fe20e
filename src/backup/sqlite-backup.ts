import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import Database from "better-sqlite3";

/** What a finished backup wrote. */
export interface SqliteBackupResult {
  readonly destination: string;
  readonly bytes: number;
  readonly pages: number;
  readonly milliseconds: number;
}

/** A backup that could not be taken; its message names the cause (no partial file is left). */
export class BackupError extends Error {}

/**
 * An online, consistent copy of the embedded database at `source` into `destination` (a new file),
 * while the service keeps serving. It uses SQLite's backup API (better-sqlite3's `backup()`) and
 * copies every page in one step, which is one read transaction: the copy is the database as of the
 * moment the step began, every write committed before it included, none half-applied. In WAL mode a
 * reader never blocks the service's writer, and a single step cannot be restarted by a write from
 * another connection (the backup API starts over when the source changes between steps, so a busy
 * service could keep a page-by-page copy from ever finishing). The copy is written beside the
 * destination and renamed into place after `PRAGMA integrity_check` passed on it.
 */
export async function backupSqlite(source: string, destination: string): Promise<SqliteBackupResult> {
  if (!existsSync(source)) throw new BackupError(`no database at ${source}`);
  if (existsSync(destination)) throw new BackupError(`${destination} exists: choose a new file`);
  const partial = `${destination}.partial`;
  rmSync(partial, { force: true });
  const started = performance.now();
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 10000");
    const { totalPages } = await db.backup(partial, {
      // The first step (0 pages) opens the backup; the next copies every page at once.
      progress: () => 0x7fffffff,
    });
    const copy = new Database(partial, { fileMustExist: true });
    try {
      const check = copy.pragma("integrity_check", { simple: true });
      if (check !== "ok") throw new BackupError(`the copy failed its integrity check: ${String(check)}`);
    } finally {
      copy.close();
    }
    renameSync(partial, destination);
    return {
      destination,
      bytes: statSync(destination).size,
      pages: totalPages,
      milliseconds: Math.round(performance.now() - started),
    };
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
}
