import type { DataSource } from "typeorm";
import type { Dialect } from "./data-source";
import { type Mysql2Connection, type Send, sendOn, sendStatement } from "./hot-statement";

/** A row lock's longest wait on MySQL before the write gives up (ABORTED), instead of InnoDB's 50 s. */
export const ROW_LOCK_WAIT_SECONDS = 5;

/** Runs write transactions, each on one connection it owns from its start to its end. */
export interface UnitOfWork {
  /**
   * Runs `work` in one transaction whose statements it sends with `send`: commits them when `work`
   * resolves, rolls them all back when it throws or the commit fails, and rethrows the error as the
   * driver raised it (storage-errors.ts classifies it).
   */
  run<T>(work: (send: Send) => Promise<T>): Promise<T>;
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
 * the service's CPU per append, on top of the statements themselves.
 */
class PooledUnitOfWork implements UnitOfWork {
  private readonly prepared = new WeakSet<PooledConnection>();

  constructor(private readonly dataSource: DataSource) {}

  async run<T>(work: (send: Send) => Promise<T>): Promise<T> {
    const driver = this.dataSource.driver as unknown as PoolDriver;
    const connection = await driver.obtainMasterConnection();
    // Nothing reaches the connection once the transaction has ended: a statement the work sent late
    // would otherwise run outside it (autocommit), or inside the next write that takes the connection.
    let open = true;
    const send: Send = (sql, parameters) =>
      open
        ? sendOn(connection, sql, parameters)
        : Promise.reject(new Error("the write transaction has ended"));
    let result: T;
    try {
      await this.prepare(connection);
      // Plain START TRANSACTION: the isolation level is already set on the session, which saves a
      // round trip inside every serialized write.
      await sendOn(connection, "START TRANSACTION", []);
      result = await work(send);
      open = false;
      await sendOn(connection, "COMMIT", []);
    } catch (error) {
      open = false;
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

  run<T>(work: (send: Send) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => {
      const runner = manager.queryRunner;
      if (!runner) throw new Error("a write transaction runs on a query runner");
      return work((sql, parameters) => sendStatement(runner, "sqlite", sql, parameters));
    });
  }
}
