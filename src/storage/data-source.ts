import type { Dialect } from "./sql-dialect";
import "reflect-metadata";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { DataSource } from "typeorm";
import { PlanEntity } from "./tables/heads";
import { RevisionEntity } from "./tables/revisions";
import { TaskEntity } from "./tables/tasks";
import { InitialSchema1764400000000 } from "./migrations/1764400000000-initial-schema";
import { WriteRequests1764500000000 } from "./migrations/1764500000000-write-requests";
import { AppendComposition1764600000000 } from "./migrations/1764600000000-append-composition";
import { PlanChanges1764700000000 } from "./migrations/1764700000000-plan-changes";
import { ChangeContentPrefix1764800000000 } from "./migrations/1764800000000-change-content-prefix";
import { RevisionContentAtHead1764900000000 } from "./migrations/1764900000000-revision-content-at-head";
import { ChangeStoredBytes1765000000000 } from "./migrations/1765000000000-change-stored-bytes";
import { HistoryUsage1765100000000 } from "./migrations/1765100000000-history-usage";
import { RevisionLocality1765200000000 } from "./migrations/1765200000000-revision-locality";
import { RevisionMergeMarker1765300000000 } from "./migrations/1765300000000-revision-merge-marker";
import { ChecklistProgress1765400000000 } from "./migrations/1765400000000-checklist-progress";
import { WriteRequestEntity } from "./tables/write-requests";

/**
 * The dialect of a database URL: `sqlite:<path>` (or `sqlite::memory:`) or
 * `mysql://user:pass@host:port/db`; throws on anything else.
 */
export function dialectOf(url: string): Dialect {
  if (url.startsWith("sqlite:")) return "sqlite";
  if (url.startsWith("mysql://") || url.startsWith("mariadb://")) return "mysql";
  throw new Error(`unsupported database URL scheme (expected sqlite: or mysql://)`);
}

/**
 * A TypeORM data source for the URL (not yet initialized). Never synchronizes: migrations own the
 * schema. MySQL: `stream` opens each pooled connection's socket (database-nodes.ts: to the Galera
 * node the replica talks to now) instead of the URL's host.
 */
export function createDataSource(
  url: string,
  options: { poolSize: number; stream?: () => NodeJS.ReadWriteStream },
): DataSource {
  const common = {
    entities: [TaskEntity, PlanEntity, RevisionEntity, WriteRequestEntity],
    migrations: [
      InitialSchema1764400000000,
      WriteRequests1764500000000,
      AppendComposition1764600000000,
      PlanChanges1764700000000,
      ChangeContentPrefix1764800000000,
      RevisionContentAtHead1764900000000,
      ChangeStoredBytes1765000000000,
      HistoryUsage1765100000000,
      RevisionLocality1765200000000,
      RevisionMergeMarker1765300000000,
      ChecklistProgress1765400000000,
    ],
    migrationsTableName: "schema_migrations",
    synchronize: false,
    logging: false,
  };
  if (dialectOf(url) === "sqlite") {
    const database = url.slice("sqlite:".length);
    if (database !== ":memory:") mkdirSync(dirname(database), { recursive: true });
    return new DataSource({
      ...common,
      type: "better-sqlite3",
      database,
      prepareDatabase: (db: { pragma(statement: string): unknown }) => {
        db.pragma("journal_mode = WAL");
        // What better-sqlite3 gives a file that is already in WAL mode, also on the first start of a
        // new one (which got FULL): a commit survives the process's crash, not the machine's power
        // loss. With FULL, every commit's sync of the log would also wait behind the background
        // checkpoint's sync of the database file (wal-checkpointer.ts): the soak saw 0.5 to 1.4 s.
        db.pragma("synchronous = NORMAL");
        db.pragma("foreign_keys = ON");
      },
    });
  }
  return new DataSource({
    ...common,
    type: "mysql",
    url: url.replace(/^mariadb:/, "mysql:"),
    charset: "utf8mb4_bin",
    timezone: "Z",
    supportBigNumbers: true,
    bigNumberStrings: false,
    poolSize: options.poolSize,
    // trace: false skips mysql2's stack capture on every query (errors are classified by their
    // code, and the capture cost showed in CPU profiles of the serialized write path).
    extra: {
      connectTimeout: 5_000,
      trace: false,
      multipleStatements: true,
      ...(options.stream ? { stream: options.stream } : {}),
    },
  });
}

/** The better-sqlite3 connection TypeORM holds for an SQLite data source (initialized). */
export function sqliteConnection(dataSource: DataSource): BetterSqlite3.Database {
  return (dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database }).databaseConnection;
}

/** The database runs in a mode under which the service's statements are not safe to send. */
export class UnsafeSqlModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeSqlModeError";
  }
}

/**
 * Refuses a MySQL server whose sql_mode has NO_BACKSLASH_ESCAPES (initialized data source). mysql2
 * puts every value into the statement's text itself, escaping a quote with a backslash; under that
 * mode the backslash is an ordinary character, so a value with a quote could end its string and,
 * with the multi-statement queries of the write path, add statements of its own.
 */
export async function refuseUnsafeSqlMode(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== "mysql") return;
  const rows = (await dataSource.query(
    "SELECT @@GLOBAL.sql_mode AS global_mode, @@SESSION.sql_mode AS session_mode",
  )) as { global_mode: string | null; session_mode: string | null }[];
  const modes = `${rows[0]?.global_mode ?? ""},${rows[0]?.session_mode ?? ""}`;
  if (/\bNO_BACKSLASH_ESCAPES\b/i.test(modes))
    throw new UnsafeSqlModeError(
      "PLAN_DATABASE_URL: the database's sql_mode includes NO_BACKSLASH_ESCAPES, under which the" +
        " driver's escaping of values is unsafe; remove it from the server's sql_mode",
    );
}
