import { runOnce } from "./run-once";
import { backupSqlite, BackupError } from "../backup/sqlite-backup";
import { loadConfig } from "../config/config";

/**
 * `node dist/src/bin/backup.js <destination>`: an online, consistent
 * backup of the embedded database (PLAN_DATABASE_URL=sqlite:<path>) into a new file, taken while the
 * service serves; prints one JSON line (destination, bytes, pages, milliseconds) and exits 0. Any
 * failure exits 1 with one line on stderr. A MySQL/MariaDB database is backed up with the database's
 * own tools (docs/runbook.md, "Backup and restore").
 */
async function backup(): Promise<void> {
  const destination = process.argv[2];
  if (!destination || process.argv.length > 3) throw new BackupError("usage: backup.js <destination file>");
  const { databaseUrl } = loadConfig(process.env);
  if (!databaseUrl.startsWith("sqlite:") || databaseUrl === "sqlite::memory:")
    throw new BackupError(
      "PLAN_DATABASE_URL is not an SQLite file: back up MySQL/MariaDB with mariadb-dump --single-transaction (docs/runbook.md)",
    );
  const result = await backupSqlite(databaseUrl.slice("sqlite:".length), destination);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

runOnce("backup", backup);
