import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { QueryRunner } from "typeorm";

/**
 * The migration lock of a Galera cluster. GET_LOCK is a node's own: two migration Jobs whose
 * connections reach two nodes both get it and migrate at once. This lock is a row, and taking it
 * is an UPDATE that commits: two takers through two nodes are ordered by certification (the later
 * one is refused, ER_LOCK_DEADLOCK, or, applied after the first, finds the row taken), so exactly
 * one holds it. A holder that dies keeps it until its expiry; the operator may free it sooner
 * (docs/runbook.md, "A migration lock left by a dead Job").
 */

/** The lock's table: one row, its own primary key (Galera replicates no table without one). */
export const CLUSTER_LOCK_TABLE_SQL =
  "CREATE TABLE IF NOT EXISTS schema_migration_lock (" +
  "name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(255) NULL, expires_at DATETIME(6) NULL) ENGINE=InnoDB";

/** How long a holder that never released the lock (it died) keeps it: longer than any migration. */
export const CLUSTER_LOCK_EXPIRY_SECONDS = 15 * 60;

const RETRY_MS = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the connection's server is a Galera node (wsrep_on). */
export async function onGalera(runner: QueryRunner): Promise<boolean> {
  const rows = (await runner.query("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'")) as { Value?: string }[];
  return (rows[0]?.Value ?? "").toUpperCase() === "ON";
}

/** Who holds a lock: a name for its row (host, process, a random tag). */
export function holderName(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * Takes the cluster's migration lock for `holder` within `waitMs`: true once taken; false when
 * another holder kept it (its name in `heldBy`).
 */
export async function takeClusterLock(
  runner: QueryRunner,
  holder: string,
  waitMs: number,
): Promise<{ taken: boolean; heldBy: string | null }> {
  await runner.query(CLUSTER_LOCK_TABLE_SQL); // DDL: Galera runs it in total order on every node
  await retryConflicts(() =>
    runner.query(
      "INSERT IGNORE INTO schema_migration_lock (name, holder, expires_at) VALUES ('migrate', NULL, NULL)",
    ),
  );
  const deadline = Date.now() + waitMs;
  for (;;) {
    const result = (await runner
      .query(
        "UPDATE schema_migration_lock SET holder = ?, expires_at = NOW(6) + INTERVAL ? SECOND" +
          " WHERE name = 'migrate' AND (holder IS NULL OR expires_at < NOW(6))",
        [holder, CLUSTER_LOCK_EXPIRY_SECONDS],
        true,
      )
      .catch((error: unknown) => {
        if (!isConflict(error)) throw error;
        return { affected: 0 }; // another taker's UPDATE through another node was certified first
      })) as { affected?: number };
    if (result.affected === 1) return { taken: true, heldBy: null };
    if (Date.now() >= deadline) {
      const rows = (await runner.query(
        "SELECT holder FROM schema_migration_lock WHERE name = 'migrate'",
      )) as {
        holder: string | null;
      }[];
      return { taken: false, heldBy: rows[0]?.holder ?? null };
    }
    await sleep(RETRY_MS);
  }
}

/** Releases the lock if `holder` still holds it. */
export async function releaseClusterLock(runner: QueryRunner, holder: string): Promise<void> {
  await retryConflicts(() =>
    runner.query(
      "UPDATE schema_migration_lock SET holder = NULL, expires_at = NULL WHERE name = 'migrate' AND holder = ?",
      [holder],
    ),
  );
}

async function retryConflicts<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if (!isConflict(error) || attempt >= 10) throw error;
      await sleep(RETRY_MS);
    }
  }
}

function isConflict(error: unknown): boolean {
  const driver = (error as { driverError?: { errno?: unknown } }).driverError ?? error;
  return (driver as { errno?: unknown }).errno === 1213;
}
