import type { QueryRunner } from "typeorm";
import type { Dialect } from "./data-source";

/** What a hand-written statement returned: its rows (a SELECT), or the number of rows it changed. */
export interface StatementResult {
  readonly rows: unknown[];
  readonly affected: number;
}

type Mysql2Connection = {
  query(sql: string, values: unknown[], callback: (error: Error | null, result: unknown) => void): void;
};

/**
 * Sends a hand-written statement of a write transaction on the connection of its query runner. On
 * MySQL it goes straight to the runner's mysql2 connection: TypeORM's `query()` wraps every call in
 * a new promise connection, four awaits and query events this service does not use (its logging is
 * off and it has no subscribers). Errors are the driver's own, which storage-errors classifies the
 * same way. On SQLite, and before the runner holds a connection, it goes through the runner.
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
  const result = await new Promise<unknown>((resolve, reject) =>
    connection.query(sql, parameters, (error, value) => (error ? reject(error) : resolve(value))),
  );
  if (Array.isArray(result)) return { rows: result, affected: 0 };
  return { rows: [], affected: (result as { affectedRows?: number }).affectedRows ?? 0 };
}
