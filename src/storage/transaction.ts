import type { DataSource, QueryRunner } from "typeorm";
import { StorageConflictError } from "../plans/ports/store-errors";
import type { Dialect } from "./sql-dialect";
import { classifyCommitFailure } from "./storage-errors";
import {
  type ConnectionSource,
  type Mysql2Connection,
  type PooledConnection,
  queryOn,
  resultOf,
  type Send,
  sendOn,
  type StatementResult,
  WriteConnection,
  type WriteConnectionOptions,
} from "./write-connection";

/**
 * One write transaction, on both databases: the statements it sends and defers, the fence checked
 * with its commit, its rollback, the session's settings while it is open, and the connection it owns
 * from start to end (a pooled mysql2 connection on MySQL, TypeORM's on SQLite).
 */

/** A deferred statement that must change exactly one row, or its write is refused (StorageConflictError). */
export interface Fence {
  /** What the refusal says. */
  readonly lost: string;
  /**
   * Runs in the transaction, before the refusal and the rollback, with the transaction's statements:
   * may throw an error of its own instead (an append checks the size of the text it composed on).
   */
  readonly check?: (send: Send) => Promise<void>;
}

/**
 * The statements of one write transaction. A write sends the statements whose result it reads, and
 * defers the others: these go to the database, in order, just before the next statement it sends,
 * or with the commit. On MySQL one round trip then carries a write's rows and its COMMIT, which ends
 * the row locks its locking read took one round trip sooner per statement (transaction.ts).
 */
export interface WriteStatements {
  /** Sends a statement (after every deferred one): its rows, or the number of rows it changed. */
  readonly send: Send;
  /** Queues a statement whose result the write does not read; `fence`: it must change one row. */
  defer(sql: string, parameters: unknown[], fence?: Fence): void;
}

interface Deferred {
  readonly sql: string;
  readonly parameters: unknown[];
  readonly fence?: Fence;
}

/** The error a statement raises for a fence lost: no COMMIT in the same query runs after it. */
const FENCE_LOST_ERRNO = 1242; // ER_SUBQUERY_NO_1_ROW
/**
 * The check after a fenced statement, in SQL: a scalar subquery that finds two rows (an error that
 * stops a multi-statement query there) unless the statement just before it changed exactly one row;
 * with one row changed it finds none, and the check returns one NULL.
 *
 * The count's condition lives inside the subquery, so its result is right whenever the database
 * evaluates it (an optimizer may run an uncorrelated scalar subquery ahead of the outer statement,
 * TiDB does): ROW_COUNT() holds the previous statement's count for the whole of this one. It sets
 * no variable and needs no INTO, SIGNAL or procedure, none of which TiDB or Vitess runs; MySQL,
 * MariaDB, TiDB and Vitess (which binds ROW_COUNT() to the count it tracks) all raise 1242 for a
 * scalar subquery of two rows (docs/architecture.md, "SQL the service relies on"). MariaDB is run here, in every
 * case (test/integration/storage/transaction.test.ts).
 */
export const FENCE_CHECK =
  "SELECT (SELECT 1 FROM (SELECT 1 AS k UNION ALL SELECT 2) AS two WHERE ROW_COUNT() <> 1) AS fence";

/** The queue both dialects share; how the deferred statements travel is the subclass's. */
abstract class DeferringStatements implements WriteStatements {
  protected pending: Deferred[] = [];
  private over = false;

  /** The transaction has ended (its COMMIT is on its way, or it was abandoned). */
  get ended(): boolean {
    return this.over;
  }

  readonly send: Send = (sql, parameters) => {
    if (this.over) return Promise.reject(new Error("the write transaction has ended"));
    return this.sendAfterPending({ sql, parameters });
  };

  defer(sql: string, parameters: unknown[], fence?: Fence): void {
    if (this.over) throw new Error("the write transaction has ended");
    this.pending.push({ sql, parameters, fence });
  }

  /** Nothing the work sends from now on reaches the connection (it would run outside the transaction). */
  protected end(): void {
    this.over = true;
  }

  /** Sends the deferred statements, then `last` (if any): `last`'s result. */
  protected abstract sendAfterPending(last: Deferred | null): Promise<StatementResult>;
}

// The refusal of a lost fence, after the checks of the fences it may be (run on `send`).
async function refuseLostFence(fences: readonly Fence[], send: Send): Promise<never> {
  for (const fence of fences) await fence.check?.(send);
  throw new StorageConflictError(fences.map((fence) => fence.lost).join("; "));
}

/**
 * MySQL: the deferred statements travel in one multi-statement query with the statement sent after
 * them (or the COMMIT), each fenced one followed by FENCE_CHECK. The database stops that query at its
 * first error, so a lost fence leaves the transaction open, uncommitted, to be checked and rolled back.
 */
export class BatchedStatements extends DeferringStatements {
  /** `afterCommit`: a statement sent with the COMMIT, after it (the session's settings restored). */
  constructor(
    private readonly connection: Mysql2Connection,
    private readonly afterCommit: string | null = null,
  ) {
    super();
  }

  /** A fenced statement changed no row: its query stopped there, before any COMMIT after it. */
  private fenceLost = false;

  /**
   * Sends the deferred statements with `COMMIT` in one round trip; nothing can be sent after it. A
   * failure of that round trip is classified here, the one place that knows a COMMIT was sent
   * (storage-errors.ts classifyCommitFailure): a connection lost while it was out is a
   * CommitOutcomeUnknownError, never "nothing written". A lost fence stopped the query before the
   * COMMIT: its refusal (and whatever its checks raise) is definite.
   */
  async commit(): Promise<void> {
    this.end();
    this.fenceLost = false;
    try {
      if (this.afterCommit === null) {
        await this.sendAfterPending({ sql: "COMMIT", parameters: [] });
        return;
      }
      this.pending.push({ sql: "COMMIT", parameters: [] });
      await this.sendAfterPending({ sql: this.afterCommit, parameters: [] });
    } catch (error) {
      throw this.fenceLost ? error : classifyCommitFailure(error);
    }
  }

  /** Ends the transaction without sending what is still deferred (it is rolled back). */
  abandon(): void {
    this.end();
    this.pending = [];
  }

  protected async sendAfterPending(last: Deferred | null): Promise<StatementResult> {
    // Plain loops: this runs twice per write, and spreads and flatMaps allocate on every one.
    const statements = this.pending;
    this.pending = [];
    if (last) statements.push(last);
    let fenced = false;
    for (const statement of statements) fenced ||= statement.fence !== undefined;
    const [only] = statements;
    if (statements.length <= 1 && !fenced)
      return only ? sendOn(this.connection, only.sql, only.parameters) : { rows: [], affected: 0 };
    // Joined, not concatenated: a concatenation is a rope that the driver's placeholder scan
    // flattens again (a second copy of every byte; 2 µs per append in bench:profile's perf samples).
    const sql: string[] = [];
    const parameters: unknown[] = [];
    for (const statement of statements) {
      sql.push(statement.sql);
      if (statement.fence) sql.push(FENCE_CHECK);
      for (const parameter of statement.parameters) parameters.push(parameter);
    }
    const results = (await queryOn(this.connection, sql.join(";\n"), parameters).catch((error: unknown) => {
      const fences = statements.flatMap((statement) => (statement.fence ? [statement.fence] : []));
      if ((error as { errno?: unknown }).errno !== FENCE_LOST_ERRNO || fences.length === 0) throw error;
      this.fenceLost = true;
      return refuseLostFence(fences, (query, values) => sendOn(this.connection, query, values));
    })) as unknown[];
    return resultOf(results[results.length - 1]);
  }
}

/**
 * SQLite (and a transaction of TypeORM's): the deferred statements are sent one by one on `send`, and
 * a fenced one's row count is read as it comes back. `flush` before the transaction commits.
 */
export class SequentialStatements extends DeferringStatements {
  constructor(private readonly direct: Send) {
    super();
  }

  /** Sends what is still deferred; the work is then done and nothing more can be sent. */
  async flush(): Promise<void> {
    try {
      await this.sendAfterPending(null);
    } finally {
      this.end();
    }
  }

  protected async sendAfterPending(last: Deferred | null): Promise<StatementResult> {
    for (const { sql, parameters, fence } of this.pending.splice(0)) {
      const { affected } = await this.direct(sql, parameters);
      if (fence && affected !== 1) await refuseLostFence([fence], this.direct);
    }
    return last ? this.direct(last.sql, last.parameters) : { rows: [], affected: 0 };
  }
}

/** A row lock's longest wait on MySQL before the write gives up (ABORTED), instead of InnoDB's 50 s. */
export const ROW_LOCK_WAIT_SECONDS = 5;

/** Runs write transactions, each on one connection it owns from its start to its end. */
export interface UnitOfWork {
  /**
   * Runs `work` in one transaction whose statements it sends or defers (transaction.ts): commits
   * them when `work` resolves, rolls them all back when it throws, a fence is lost or the commit
   * fails, and rethrows the error as the driver raised it (storage-errors.ts classifies it; a lost
   * fence is a StorageConflictError already). On MySQL a failed round trip that carried the COMMIT
   * is classified where it failed: a connection lost with it is a CommitOutcomeUnknownError (the
   * write may have been applied); a failure before the COMMIT was sent leaves nothing written (the
   * server rolls back a transaction whose session ends). SQLite commits in process: its COMMIT
   * returns or throws, and a throw is not applied.
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

/**
 * Sends a hand-written statement on the connection of a TypeORM query runner: on MySQL straight to
 * the runner's mysql2 connection (sendOn); on SQLite, and before the runner holds a connection,
 * through the runner.
 */
export async function sendStatement(
  runner: QueryRunner,
  dialect: Dialect,
  sql: string,
  parameters: unknown[],
): Promise<StatementResult> {
  const connection = (runner as { databaseConnection?: Mysql2Connection }).databaseConnection;
  if (dialect !== "mysql" || connection === undefined) {
    const result = (await runner.query(sql, parameters, true)) as { records?: unknown[]; affected?: number };
    return { rows: result.records ?? [], affected: result.affected ?? 0 };
  }
  return sendOn(connection, sql, parameters);
}
