import type { DataSource, QueryRunner } from "typeorm";
import type { Dialect } from "./data-source";
import { queryOn, sendOn, sendStatement } from "./hot-statement";
import {
  type ConnectionSource,
  type PooledConnection,
  WriteConnection,
  type WriteConnectionOptions,
} from "./write-connection";
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
export function unitOfWork(
  dataSource: DataSource,
  dialect: Dialect,
  connections: WriteConnectionOptions = DEFAULT_WRITE_CONNECTIONS,
): UnitOfWork {
  return dialect === "mysql"
    ? new PooledUnitOfWork(dataSource, connections)
    : new SqliteUnitOfWork(dataSource);
}

/** The lease's default (PLAN_LOCK_LEASE_MS), in seconds. */
export const DEFAULT_WRITE_CONNECTIONS: WriteConnectionOptions = { holdSeconds: 5 };

interface PoolDriver {
  /** What MysqlQueryRunner.connect calls: a connection from the pool, with TypeORM's error listener. */
  obtainMasterConnection(): Promise<PooledConnection>;
}

/**
 * The session's bounds while a write's transaction is open: the server ends a session that sends
 * nothing for `seconds` (its holder frozen, or its host gone without closing the socket), and with it
 * the transaction and its row locks, which would otherwise stay until the server's wait_timeout (8
 * hours by default) or TCP keepalive. MySQL and MariaDB alike read the session's wait_timeout each
 * time they wait for a statement (net_read_timeout, while one is half received), inside a
 * transaction too. Restored (RESTORE_SESSION_BOUNDS) with the COMMIT or ROLLBACK, so that an idle
 * pooled connection keeps the server's own.
 */
export function sessionBounds(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  return `SET SESSION wait_timeout = ${s}, net_read_timeout = ${s}`;
}

/** The server's own bounds again, for a connection back in the pool. */
export const RESTORE_SESSION_BOUNDS =
  "SET SESSION wait_timeout = @@GLOBAL.wait_timeout, net_read_timeout = @@GLOBAL.net_read_timeout";

/**
 * MySQL: each write takes a connection from TypeORM's own mysql2 pool and drives its transaction
 * with plain statements on the driver's callback API. A QueryRunner (create, connect, start, commit,
 * release, each statement through a promise wrapper and broadcaster events) cost 35 to 50 µs of
 * the service's CPU per append, on top of the statements themselves. The session's bounds and START
 * TRANSACTION travel with the first statement the work sends (its locking read), and the rows it
 * defers with the COMMIT: an append makes two round trips, and holds its task's row locks for one
 * after its decision.
 */
class PooledUnitOfWork implements UnitOfWork {
  private readonly prepared = new WeakSet<PooledConnection>();
  private readonly source: ConnectionSource;
  private readonly holdBounds: string;

  constructor(
    dataSource: DataSource,
    private readonly options: WriteConnectionOptions,
  ) {
    const driver = dataSource.driver as unknown as PoolDriver;
    this.source = { take: () => driver.obtainMasterConnection(), prepare: (c) => this.prepare(c) };
    this.holdBounds = sessionBounds(options.holdSeconds);
  }

  async run<T>(work: (statements: WriteStatements) => Promise<T>): Promise<T> {
    const connection = await WriteConnection.take(this.source, (reason) => this.options.onReplaced?.(reason));
    // Nothing reaches the connection once the transaction has ended (commit, abandon): a statement
    // the work sent late would otherwise run outside it (autocommit), or inside the next write that
    // takes the connection.
    const statements = new BatchedStatements(connection, RESTORE_SESSION_BOUNDS);
    connection.resendFirstWhile(() => !statements.ended);
    let result: T;
    try {
      statements.defer(this.holdBounds, []);
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
  // lock gives up after a few seconds with ABORTED.
  private async prepare(connection: PooledConnection): Promise<void> {
    if (this.prepared.has(connection)) return;
    await sendOn(connection, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", []);
    await sendOn(connection, `SET SESSION innodb_lock_wait_timeout = ${ROW_LOCK_WAIT_SECONDS}`, []);
    this.prepared.add(connection);
  }
}

// Undoes whatever the failed transaction sent (harmless where none had started), restores the
// session's bounds and gives the connection back; a connection that cannot even roll back (lost,
// killed) is in an unknown state and is closed instead, so that the pool never hands it to another
// write.
async function rollBack(connection: WriteConnection): Promise<void> {
  try {
    await queryOn(connection, `ROLLBACK;\n${RESTORE_SESSION_BOUNDS}`, []);
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
