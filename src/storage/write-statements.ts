import { StorageConflictError } from "../plans/ports/store-errors";
import {
  type Mysql2Connection,
  queryOn,
  resultOf,
  type Send,
  sendOn,
  type StatementResult,
} from "./hot-statement";

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
 * the row locks its locking read took one round trip sooner per statement (unit-of-work.ts).
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
 * case (test/integration/unit-of-work.test.ts).
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

  /** Sends the deferred statements with `COMMIT` in one round trip; nothing can be sent after it. */
  async commit(): Promise<void> {
    this.end();
    if (this.afterCommit === null) {
      await this.sendAfterPending({ sql: "COMMIT", parameters: [] });
      return;
    }
    this.pending.push({ sql: "COMMIT", parameters: [] });
    await this.sendAfterPending({ sql: this.afterCommit, parameters: [] });
  }

  /** Ends the transaction without sending what is still deferred (it is rolled back). */
  abandon(): void {
    this.end();
    this.pending = [];
  }

  protected async sendAfterPending(last: Deferred | null): Promise<StatementResult> {
    const statements = [...this.pending.splice(0), ...(last ? [last] : [])];
    const fences = statements.flatMap((s) => (s.fence ? [s.fence] : []));
    const [only] = statements;
    if (statements.length <= 1 && fences.length === 0)
      return only ? sendOn(this.connection, only.sql, only.parameters) : { rows: [], affected: 0 };
    const sql = statements.flatMap((s) => (s.fence ? [s.sql, FENCE_CHECK] : [s.sql])).join(";\n");
    const results = (await queryOn(
      this.connection,
      sql,
      statements.flatMap((s) => s.parameters),
    ).catch((error: unknown) => {
      if ((error as { errno?: unknown }).errno !== FENCE_LOST_ERRNO || fences.length === 0) throw error;
      return refuseLostFence(fences, (query, parameters) => sendOn(this.connection, query, parameters));
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
