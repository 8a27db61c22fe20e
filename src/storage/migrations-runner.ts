import { type DataSource, MigrationExecutor, type QueryRunner } from "typeorm";
import { holderName, onGalera, releaseClusterLock, takeClusterLock } from "./cluster-migration-lock";

/** A migration that could not run; the message is one line naming the cause (for Job logs). */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message.replace(/\s+/g, " ").trim());
    this.name = "MigrationError";
  }
}

/** What a migration run did. */
export interface MigrationOutcome {
  /** Names of the migrations this run applied (empty when the schema was already current). */
  readonly applied: readonly string[];
}

/**
 * SQL naming the migration lock of the connection's database. Advisory locks are server-wide in
 * MySQL, so the name carries the database: migrating database A never waits on database B of the
 * same server. SHA1 keeps the name inside MySQL's 64-character limit.
 */
export const MIGRATION_LOCK_NAME_SQL = "CONCAT('taskplans_migrate_', LEFT(SHA1(DATABASE()), 40))";

/**
 * Applies pending migrations (idempotent; a second run applies nothing). On MySQL, processes starting
 * at once (migration Jobs, replicas migrating on start) take turns through a per-database advisory
 * lock, waiting at most `lockWaitMs`; on a Galera node also through the cluster's lock row, which
 * holds across nodes where the advisory lock does not. The lock and the migrations share one connection, so a pool of
 * one connection is enough. Failures throw MigrationError.
 */
export async function runMigrations(
  dataSource: DataSource,
  options: { lockWaitMs: number },
): Promise<MigrationOutcome> {
  const runner = dataSource.createQueryRunner();
  let clusterHolder: string | null = null;
  try {
    if (dataSource.options.type === "mysql") {
      await takeLock(runner, options.lockWaitMs);
      // On Galera the advisory lock is the node's own: the cluster's is a row (cluster-migration-lock.ts).
      if (await onGalera(runner)) clusterHolder = await takeGaleraLock(runner, options.lockWaitMs);
    }
    return await migrate(dataSource, runner);
  } finally {
    if (clusterHolder !== null) await releaseClusterLock(runner, clusterHolder).catch(() => undefined);
    if (dataSource.options.type === "mysql") {
      await runner.query(`SELECT RELEASE_LOCK(${MIGRATION_LOCK_NAME_SQL})`).catch(() => undefined);
    }
    await runner.release();
  }
}

async function takeGaleraLock(runner: QueryRunner, lockWaitMs: number): Promise<string> {
  const holder = holderName();
  const { taken, heldBy } = await takeClusterLock(runner, holder, lockWaitMs).catch((error: unknown) => {
    throw new MigrationError(`the cluster's migration lock: ${messageOf(error)}`);
  });
  if (!taken) {
    const [row] = (await runner.query("SELECT DATABASE() AS db")) as { db: string | null }[];
    throw new MigrationError(
      `could not take the migration lock of database ${row?.db ?? "?"} within ${lockWaitMs} ms ` +
        `(another migration holds it on the Galera cluster: ${heldBy ?? "?"}; PLAN_MIGRATION_LOCK_WAIT_MS)`,
    );
  }
  return holder;
}

async function takeLock(runner: QueryRunner, lockWaitMs: number): Promise<void> {
  const [row] = (await runner
    .query(`SELECT GET_LOCK(${MIGRATION_LOCK_NAME_SQL}, ?) AS got, DATABASE() AS db`, [lockWaitMs / 1000])
    .catch((error: unknown) => {
      throw new MigrationError(`database unreachable: ${messageOf(error)}`);
    })) as { got: number | null; db: string | null }[];
  if (Number(row?.got) !== 1) {
    throw new MigrationError(
      `could not take the migration lock of database ${row?.db ?? "?"} within ${lockWaitMs} ms ` +
        "(another migration holds it; PLAN_MIGRATION_LOCK_WAIT_MS)",
    );
  }
}

async function migrate(dataSource: DataSource, runner: QueryRunner): Promise<MigrationOutcome> {
  const executor = new MigrationExecutor(dataSource, runner);
  executor.transaction = "each";
  try {
    const applied = await executor.executePendingMigrations();
    return { applied: applied.map((migration) => migration.name) };
  } catch (error) {
    // The first migration still pending after the failure is the one that failed.
    const [failed] = await executor.getPendingMigrations().catch(() => []);
    throw new MigrationError(`migration ${failed?.name ?? "(unknown)"} failed: ${messageOf(error)}`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
