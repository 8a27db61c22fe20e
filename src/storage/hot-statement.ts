import type { QueryRunner } from "typeorm";
import type { Dialect } from "./data-source";

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
