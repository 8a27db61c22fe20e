import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type Connection, createConnection, type RowDataPacket } from "mysql2/promise";

/** The service's tables, in the order the soak prints them. */
export const TABLES = [
  "tasks",
  "task_plans",
  "task_plan_revisions",
  "task_plan_changes",
  "write_requests",
] as const;
export type Table = (typeof TABLES)[number];

/** One look at the database from outside the service. */
export interface DatabaseSample {
  /** Bytes on disk of the database (SQLite: main file + WAL; MariaDB: the schema's .ibd files). */
  readonly fileBytes: number;
  /** Of fileBytes, the SQLite write-ahead log (0 on MariaDB). */
  readonly walBytes: number;
  readonly rows: Readonly<Record<Table, number>>;
  /** Change rows committed before the cutoff given to sample(). */
  readonly staleChanges: number;
  /** Change rows per task. */
  readonly changesPerTask: ReadonlyMap<string, number>;
}

/** Reads sizes and row counts of the soak's database (read-only; beside the running service). */
export interface DatabaseProbe {
  readonly describe: string;
  sample(staleBefore: number): Promise<DatabaseSample>;
  close(): Promise<void>;
}

const COUNTS = `SELECT ${TABLES.map((t) => `(SELECT COUNT(*) FROM ${t}) AS ${t}`).join(", ")}`;
const STALE = "SELECT COUNT(*) AS n FROM task_plan_changes WHERE committed_at < ?";
const PER_TASK = "SELECT task_id, COUNT(*) AS n FROM task_plan_changes GROUP BY task_id";

const fileSize = (path: string) => (existsSync(path) ? statSync(path).size : 0);

/** A read-only connection to the SQLite file (WAL mode lets it read while the server writes). */
export function sqliteProbe(file: string): DatabaseProbe {
  let db: Database.Database | null = null;
  const open = () => {
    db ??= new Database(file, { readonly: true, fileMustExist: true });
    db.pragma("busy_timeout = 5000");
    return db;
  };
  return {
    describe: `SQLite file ${file}`,
    async sample(staleBefore) {
      const connection = open();
      const counts = connection.prepare(COUNTS).get() as Record<Table, number>;
      const stale = connection.prepare(STALE).get(staleBefore) as { n: number };
      const perTask = connection.prepare(PER_TASK).all() as { task_id: string; n: number }[];
      const walBytes = fileSize(`${file}-wal`);
      return {
        fileBytes: fileSize(file) + walBytes,
        walBytes,
        rows: counts,
        staleChanges: stale.n,
        changesPerTask: new Map(perTask.map((row) => [row.task_id, row.n])),
      };
    },
    async close() {
      db?.close();
      db = null;
    },
  };
}

/** A connection to the soak's MariaDB database; sizes are the .ibd files in the server's datadir. */
export async function mariadbProbe(port: number, database: string): Promise<DatabaseProbe> {
  const connection: Connection = await createConnection({ host: "127.0.0.1", port, user: "root", database });
  const [dirRows] = await connection.query<RowDataPacket[]>("SELECT @@datadir AS dir");
  const dir = join(String(dirRows[0]?.dir ?? ""), database);
  return {
    describe: `MariaDB 127.0.0.1:${port} database ${database} (${dir})`,
    async sample(staleBefore) {
      const [counts] = await connection.query<RowDataPacket[]>(COUNTS);
      const [stale] = await connection.query<RowDataPacket[]>(STALE, [staleBefore]);
      const [perTask] = await connection.query<RowDataPacket[]>(PER_TASK);
      const fileBytes = readdirSync(dir)
        .filter((name) => name.endsWith(".ibd"))
        .reduce((sum, name) => sum + fileSize(join(dir, name)), 0);
      const row: Record<string, unknown> = counts[0] ?? {};
      return {
        fileBytes,
        walBytes: 0,
        rows: Object.fromEntries(TABLES.map((t) => [t, Number(row[t] ?? 0)])) as Record<Table, number>,
        staleChanges: Number(stale[0]?.n ?? 0),
        changesPerTask: new Map(perTask.map((r) => [String(r.task_id), Number(r.n)])),
      };
    },
    close: () => connection.end(),
  };
}
