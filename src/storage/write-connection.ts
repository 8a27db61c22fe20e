/** What a hand-written statement returned: its rows (a SELECT), or the number of rows it changed. */
export interface StatementResult {
  readonly rows: unknown[];
  readonly affected: number;
}

/** A statement of a write transaction, with `?` placeholders: its rows, or the rows it changed. */
export type Send = (sql: string, parameters: unknown[]) => Promise<StatementResult>;

/** A mysql2 connection, as its callback API sends a statement. */
export interface Mysql2Connection {
  query(sql: string, values: unknown[], callback: (error: Error | null, result: unknown) => void): void;
}

/**
 * Sends a statement on a mysql2 connection through its callback API: TypeORM's `query()` wraps
 * every call in a new promise connection, four awaits and query events this service does not use
 * (its logging is off and it has no subscribers). Errors are the driver's own, which
 * storage-errors classifies the same way as TypeORM's wrapped ones.
 */
export async function sendOn(
  connection: Mysql2Connection,
  sql: string,
  parameters: unknown[],
): Promise<StatementResult> {
  return resultOf(await queryOn(connection, sql, parameters));
}

/** What mysql2 returns for `sql` (one statement or several) on its callback API, as it returns it. */
export function queryOn(connection: Mysql2Connection, sql: string, parameters: unknown[]): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) =>
    connection.query(sql, parameters, (error, value) => (error ? reject(error) : resolve(value))),
  );
}

/** What mysql2 returned for one statement: its rows (an array), or a header with the rows it changed. */
export function resultOf(result: unknown): StatementResult {
  if (Array.isArray(result)) return { rows: result, affected: 0 };
  return { rows: [], affected: (result as { affectedRows?: number } | undefined)?.affectedRows ?? 0 };
}

/** Why a write did not keep the pooled connection it was first given. */
export type ReplacedReason =
  /** Found closed when taken from the pool (the server or the network ended it while it was idle). */
  | "closed"
  /** Its first statement found it gone (closed while idle, before the pool heard of it). */
  | "lost";

/** How a write's connections are bounded and watched. */
export interface WriteConnectionOptions {
  /**
   * Seconds the database keeps a write's transaction waiting for its next statement before it ends
   * the session (rolling the transaction back and releasing its row locks): the lease's bound on a
   * holder that stopped acting (frozen, or its host gone).
   */
  readonly holdSeconds: number;
  /** Hears each connection replaced before a write used it. */
  readonly onReplaced?: (reason: ReplacedReason) => void;
}

/** A connection of the mysql2 pool TypeORM's MysqlDriver holds. */
export interface PooledConnection extends Mysql2Connection {
  /** Gives the connection back to the pool. */
  release(): void;
  /** Closes the connection and takes it out of the pool. */
  destroy(): void;
  /** The socket under it (mysql2's own). */
  readonly stream?: { readonly destroyed?: boolean };
}

/** Where a write's connections come from: TypeORM's pool, and the once-per-connection session setup. */
export interface ConnectionSource {
  take(): Promise<PooledConnection>;
  prepare(connection: PooledConnection): Promise<void>;
}

// mysql2 marks an error that ended its connection `fatal`; a statement on a connection already
// ended fails with one. A MySQL 8 server says why it closed an idle session first (4031).
function lostConnection(error: Error): boolean {
  return (error as { fatal?: unknown }).fatal === true || (error as { errno?: unknown }).errno === 4031;
}

/**
 * The pooled connection one write transaction holds, never one the server already closed: a
 * connection found closed is replaced, and so is one whose first statement finds it gone, while that
 * statement cannot have committed anything (`resendable`): the statement is then sent again on the
 * new connection. A session that ends takes its uncommitted transaction with it, so a first round
 * trip (START TRANSACTION and the locking read) that never reached the server, or did, is safe to
 * send once more.
 */
export class WriteConnection implements Mysql2Connection {
  private sent = false;
  private resendable: () => boolean = () => false;

  private constructor(
    private readonly source: ConnectionSource,
    private current: PooledConnection,
    private readonly onReplaced: (reason: ReplacedReason) => void,
  ) {}

  /** A prepared connection from `source`, replacing one found closed. */
  static async take(
    source: ConnectionSource,
    onReplaced: (reason: ReplacedReason) => void,
  ): Promise<WriteConnection> {
    const connection = new WriteConnection(source, await source.take(), onReplaced);
    if (connection.current.stream?.destroyed === true) await connection.replace("closed");
    else await prepared(source, connection.current);
    return connection;
  }

  /** The first statement is sent again on a new connection if it finds this one gone, while `can()`. */
  resendFirstWhile(can: () => boolean): void {
    this.resendable = can;
  }

  query(sql: string, values: unknown[], callback: (error: Error | null, result: unknown) => void): void {
    const first = !this.sent;
    this.sent = true;
    this.current.query(sql, values, (error, result) => {
      if (error === null || !first || !lostConnection(error) || !this.resendable()) {
        callback(error, result);
        return;
      }
      this.replace("lost").then(
        () => void this.current.query(sql, values, callback),
        (replaceError: unknown) => callback(replaceError as Error, undefined),
      );
    });
  }

  release(): void {
    this.current.release();
  }

  destroy(): void {
    this.current.destroy();
  }

  private async replace(reason: ReplacedReason): Promise<void> {
    this.current.destroy();
    this.onReplaced(reason);
    this.current = await this.source.take();
    await prepared(this.source, this.current);
  }
}

// A connection that cannot be set up is closed (it never goes back to the pool half prepared).
async function prepared(source: ConnectionSource, connection: PooledConnection): Promise<void> {
  try {
    await source.prepare(connection);
  } catch (error) {
    connection.destroy();
    throw error;
  }
}
