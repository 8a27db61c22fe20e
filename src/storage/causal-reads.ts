import type { DataSource } from "typeorm";
import type { Query } from "./tables/row";

/**
 * The service's sessions on Galera.
 *
 * - wsrep_sync_wait = 1: a read (SELECT, SHOW, START TRANSACTION) waits until this node has applied
 *   every write-set the cluster had committed when the read arrived, so that it sees a write
 *   committed through another node (bit 1, READ).
 * - wsrep_retry_autocommit = 0: a statement whose transaction a conflicting write-set aborted
 *   (brute-force abort) fails with ER_LOCK_DEADLOCK. With the server's default (1) a statement so
 *   aborted in the middle of a write's batch was run again on its own, autocommit, after the
 *   transaction's rollback, and the rest of the batch with it: its COMMIT then committed nothing
 *   and answered OK, and the service acknowledged a write that was not stored
 *   (test/galera/write-path.test.ts, racing writes through two nodes: "two acknowledged writes
 *   share version 24", the loser's token stored nowhere).
 */
export const CAUSAL_SESSION = "SET SESSION wsrep_sync_wait = 1, wsrep_retry_autocommit = 0";

/** A statement that does not wait for causality on a session that does (MariaDB's SET STATEMENT). */
export function withoutCausalWait(sql: string): string {
  return `SET STATEMENT wsrep_sync_wait = 0 FOR ${sql}`;
}

/** The pool TypeORM's MySQL driver holds (mysql2's), as far as this file uses it. */
interface Mysql2Pool {
  on(event: "connection", listener: (connection: { query(sql: string): unknown }) => void): void;
}

/**
 * Makes every session of the data source's pool (initialized, MySQL) wait for causality: each new
 * connection's first command is CAUSAL_SESSION (mysql2 runs a connection's commands in order), and
 * so is the one connection the driver opened while initializing, idle in the pool now. Reads that
 * need not see the newest commit opt out statement by statement (`historyQuery`).
 */
export async function waitForCausality(dataSource: DataSource): Promise<void> {
  const pool = (dataSource.driver as unknown as { pool: Mysql2Pool }).pool;
  pool.on("connection", (connection) => void connection.query(CAUSAL_SESSION));
  await dataSource.query(CAUSAL_SESSION);
}

/** Whether the data source's server (initialized) is a Galera node (wsrep_on); SQLite: false. */
export async function servesGalera(dataSource: DataSource): Promise<boolean> {
  if (dataSource.options.type !== "mysql") return false;
  const rows = (await dataSource.query("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'")) as { Value?: string }[];
  return (rows[0]?.Value ?? "").toUpperCase() === "ON";
}

/** `query` for reads of history pages: without the causality wait when sessions have it. */
export function historyQuery(query: Query, causal: boolean): Query {
  return causal ? (sql, parameters) => query(withoutCausalWait(sql), parameters) : query;
}
