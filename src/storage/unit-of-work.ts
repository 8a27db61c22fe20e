import type { DataSource, QueryRunner } from "typeorm";
import type { Dialect } from "./data-source";
import { type Mysql2Connection, sendOn, sendStatement } from "./hot-statement";
import { BatchedStatements, SequentialStatements, type WriteStatements } from "./write-statements";

/** A row lock's longest wait on MySQL before the write gives up (ABORTED), instead of InnoDB's 50 s. */
export const ROW_LOCK_WAIT_SECONDS = 5;

/** Runs write transactions, each on one connection it owns from its start to its end. */
export interface UnitOfWork {
  /**
   * Runs `work` in one transaction whose statements it sends or defers (write-statements.ts): commits
   * them when `work` resolves, rolls them all back when it throws, a fence is lost or the commit
   * fails, and rethrows the error as the driver raised it (storage-errors.ts classifies it; a lost
   * fence is a StorageConflictError already).
   */
  run<T>(work: (statements: WriteStatements) => Promise<T>): Promise<T>;
}

/** The unit of work of a data source (initialized): a pooled mysql2 connection, or TypeORM's on SQLite. */
export function unitOfWork(dataSource: DataSource, dialect: Dialect): UnitOfWork {
  return dialect === "mysql" ? new PooledUnitOfWork(dataSource) : new SqliteUnitOfWork(dataSource);
}

/** A connection of the mysql2 pool TypeORM's MysqlDriver holds. */
interface PooledConnection extends Mysql2Connection {
  /** Gives the connection back to the pool. */
  release(): void;
  /** Closes the connection and takes it out of the pool. */
  destroy(): void;
}

interface PoolDriver {
  /** What MysqlQueryRunner.connect calls: a connection from the pool, with TypeORM's error listener. */
  obtainMasterConnection(): Promise<PooledConnection>;
}

/**
 * MySQL: each write takes a connection from TypeORM's own mysql2 pool and drives its transaction
 * with plain statements on the driver's callback API. A QueryRunner (create, connect, start, commit,
 * release, each statement through a promise wrapper and broadcaster events) cost 35 to 50 µs of
 * the service's CPU per append, on top of the statements themselves. START TRANSACTION travels with
 * the first statement the work sends (its locking read), and the rows it defers with the COMMIT: an
 * append makes two round trips, and holds its task's row locks for one after its decision.
 */
class PooledUnitOfWork implements UnitOfWork {
  private readonly prepared = new WeakSet<PooledConnection>();

  constructor(private readonly dataSource: DataSource) {}

  async run<T>(work: (statements: WriteStatements) => Promise<T>): Promise<T> {
    const driver = this.dataSource.driver as unknown as PoolDriver;
    const connection = await driver.obtainMasterConnection();
    // Nothing reaches the connection once the transaction has ended (commit, abandon): a statement
    // the work sent late would otherwise run outside it (autocommit), or inside the next write that
    // takes the connection.
    const statements = new BatchedStatements(connection);
    let result: T;
    try {
      await this.prepare(connection);
      // Plain START TRANSACTION: the isolation level is already set on the session.
      statements.defer("START TRANSACTION", []);
      result = await work(statements);
      await statements.commit();
    } catch (error) {
      statements.abandon();
      await rollBack(connection);
      throw error;
    }
    connection.release();
    return result;
  }

  // Once per pooled connection: READ COMMITTED (every statement sees the latest commit; the locking
  // reads do the ordering, and no gap locks couple different tasks), and a writer stuck behind a row
  // lock (its holder paused or partitioned) gives up after a few seconds with ABORTED.
  private async prepare(connection: PooledConnection): Promise<void> {
    if (this.prepared.has(connection)) return;
    await sendOn(connection, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", []);
    await sendOn(connection, `SET SESSION innodb_lock_wait_timeout = ${ROW_LOCK_WAIT_SECONDS}`, []);
    this.prepared.add(connection);
  }
}

// Undoes whatever the failed transaction sent (harmless where none had started) and gives the
// connection back; a connection that cannot even roll back (lost, killed) is in an unknown state and
// is closed instead, so that the pool never hands it to another write.
async function rollBack(connection: PooledConnection): Promise<void> {
  try {
    await sendOn(connection, "ROLLBACK", []);
  } catch {
    connection.destroy();
    return;
  }
  connection.release();
}

/**
 * SQLite: TypeORM's transaction on the one better-sqlite3 connection, with each statement sent
 * through its query runner. The store's queue runs one job at a time, so a transaction never
 * overlaps another job (the WAL checkpointer's included).
 */
class SqliteUnitOfWork implements UnitOfWork {
  constructor(private readonly dataSource: DataSource) {}

  run<T>(work: (statements: WriteStatements) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => runnerWork(manager.queryRunner, "sqlite", work));
  }
}

/**
 * `work` on the transaction of a TypeORM query runner, its deferred statements sent one by one
 * before the runner commits.
 */
export async function runnerWork<T>(
  runner: QueryRunner | undefined,
  dialect: Dialect,
  work: (statements: WriteStatements) => Promise<T>,
): Promise<T> {
  if (!runner) throw new Error("a write transaction runs on a query runner");
  const statements = new SequentialStatements((sql, parameters) =>
    sendStatement(runner, dialect, sql, parameters),
  );
  const result = await work(statements);
  await statements.flush();
  return result;
}
