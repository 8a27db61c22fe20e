import Database from "better-sqlite3";
import { createConnection } from "mysql2/promise";

/**
 * Runs one SQL statement directly against a test app's database, beside the service (used to inject
 * faults such as a corrupted row). `?` placeholders on both dialects.
 */
export async function execSql(databaseUrl: string, sql: string, params: unknown[] = []): Promise<unknown[]> {
  if (databaseUrl.startsWith("sqlite:")) {
    const db = new Database(databaseUrl.slice("sqlite:".length));
    try {
      db.pragma("busy_timeout = 5000");
      const statement = db.prepare(sql);
      return statement.reader ? (statement.all(...params) as unknown[]) : [statement.run(...params)];
    } finally {
      db.close();
    }
  }
  const connection = await createConnection({ uri: databaseUrl });
  try {
    const [rows] = await connection.query(sql, params);
    return Array.isArray(rows) ? rows : [rows];
  } finally {
    await connection.end();
  }
}
