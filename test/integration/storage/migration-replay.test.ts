import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataSource } from "typeorm";
import { createDataSource } from "../../../src/storage/data-source";
import type { Dialect } from "../../../src/storage/sql-dialect";
import { runMigrations } from "../../../src/storage/migrations-runner";
import { createDatabase } from "../../harness/databases/mariadb";

// Every migration replayed on an empty database of each dialect must leave the schema the entities
// describe (issue 42, "Migrations frozen"). The entities' schema is what TypeORM's synchronize
// creates from them in a second empty database of the same dialect; the two catalogs are compared
// column by column: type, nullability and place in the primary key. Indexes, foreign keys and
// defaults are declared by the migrations alone (the entities declare none) and are not compared.
// TypeORM's own diff (createSchemaBuilder().log()) is no use here: it reports the 'NULL' default
// MariaDB shows for a nullable column as a change under `type: "mysql"`, and rebuilds SQLite tables
// over the spelling of declared types, so it would list dozens of statements that change nothing.

const PORT = Number(process.env.TEST_MARIADB_PORT);
const MIGRATIONS = join(__dirname, "..", "..", "..", "src", "storage", "migrations");

/** Tables the migrations create that no entity maps, and why. */
const TABLES_WITHOUT_ENTITY: Record<string, string> = {
  schema_migrations: "TypeORM's record of the migrations applied",
  task_plan_changes: "the change log, written and read by the write path's and WatchPlan's own SQL",
};

/**
 * Where the migrated schema and the entities differ, per dialect, each with its reason: the exact
 * set, so a difference that appears or goes away fails the test until this list says why.
 */
const KNOWN: Record<Dialect, Record<string, string>> = {
  sqlite: {
    "task_plan_revisions.content_at_head: migrated INTEGER NOT NULL, entities absent":
      "read and written only by the write path's SQL (REVISION_CONTENT in tables/revisions.ts); no entity field",
  },
  mysql: {
    "task_plan_revisions.content_at_head: migrated tinyint NOT NULL, entities absent":
      "read and written only by the write path's SQL (REVISION_CONTENT in tables/revisions.ts); no entity field",
    // RevisionLocality1765200000000 clusters one task's revisions together (MySQL only); the entity
    // keeps `id` as its identity and the table a unique key on it (see RevisionEntity in tables/revisions.ts).
    "task_plan_revisions.id: migrated varchar(36) NOT NULL, entities varchar(36) NOT NULL PK1":
      "primary key (task_id, revision_number) since RevisionLocality1765200000000; id is a unique key",
    "task_plan_revisions.task_id: migrated varchar(128) NOT NULL PK1, entities varchar(128) NOT NULL":
      "primary key (task_id, revision_number) since RevisionLocality1765200000000",
    "task_plan_revisions.revision_number: migrated int NOT NULL PK2, entities int NOT NULL":
      "primary key (task_id, revision_number) since RevisionLocality1765200000000",
    // Drift in the entities (they never create the schema: synchronize is off). A plan is up to
    // 256 KiB and TEXT holds 64 KiB, so the migrations' MEDIUMTEXT is right and `type: "text"` wrong.
    "task_plans.content: migrated mediumtext NOT NULL, entities text NOT NULL":
      "entity drift: plan text needs MEDIUMTEXT (TEXT holds 64 KiB); the entity says text",
    "task_plan_revisions.content: migrated mediumtext NOT NULL, entities text NOT NULL":
      "entity drift: plan text needs MEDIUMTEXT (TEXT holds 64 KiB); the entity says text",
    "task_plans.deleted: migrated tinyint NOT NULL, entities int NOT NULL":
      "a 0/1 flag (intAsBoolean); the entity spells it integer, which reads and writes the same values",
    "write_requests.fingerprint: migrated char(64) NOT NULL, entities varchar(64) NOT NULL":
      "a SHA-256 hex digest, always 64 characters; the entity spells it varchar(64)",
  },
};

interface Databases {
  readonly dialect: Dialect;
  /** A URL of a new empty database, each call. */
  emptyDatabase(): Promise<string>;
  cleanUp(): void;
}

function sqliteDatabases(): Databases {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-replay-"));
  let count = 0;
  return {
    dialect: "sqlite",
    emptyDatabase: () => Promise.resolve(`sqlite:${join(dir, `plans-${(count += 1)}.db`)}`),
    cleanUp: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function mariaDbDatabases(): Databases {
  return {
    dialect: "mysql",
    async emptyDatabase() {
      const name = `replay_${randomBytes(6).toString("hex")}`;
      await createDatabase(PORT, name);
      return `mysql://root@127.0.0.1:${PORT}/${name}`;
    },
    cleanUp: () => undefined,
  };
}

/** `table.column` -> "type nullability [PKn]" of every column of `tables`, as the catalog says. */
async function columnsOf(dataSource: DataSource, tables: readonly string[]): Promise<Map<string, string>> {
  const columns = new Map<string, string>();
  if (dataSource.options.type === "mysql") {
    const rows = (await dataSource.query(
      "SELECT c.TABLE_NAME AS t, c.COLUMN_NAME AS c, c.COLUMN_TYPE AS type, c.IS_NULLABLE AS nullable," +
        " k.ORDINAL_POSITION AS pk FROM information_schema.COLUMNS c LEFT JOIN information_schema.KEY_COLUMN_USAGE k" +
        " ON k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME AND k.COLUMN_NAME = c.COLUMN_NAME" +
        " AND k.CONSTRAINT_NAME = 'PRIMARY' WHERE c.TABLE_SCHEMA = DATABASE()",
    )) as { t: string; c: string; type: string; nullable: string; pk: number | null }[];
    for (const row of rows.filter((r) => tables.includes(r.t))) {
      // An integer's display width (int(11)) is cosmetic and differs between server versions.
      const type = row.type.replace(/^(tinyint|smallint|mediumint|int|bigint)\(\d+\)/, "$1");
      columns.set(`${row.t}.${row.c}`, columnText(type, row.nullable === "YES", Number(row.pk ?? 0)));
    }
    return columns;
  }
  for (const table of tables) {
    const rows = (await dataSource.query(`PRAGMA table_info("${table}")`)) as {
      name: string;
      type: string;
      notnull: number;
      pk: number;
    }[];
    for (const row of rows)
      columns.set(`${table}.${row.name}`, columnText(sqliteAffinity(row.type), row.notnull === 0, row.pk));
  }
  return columns;
}

const columnText = (type: string, nullable: boolean, pk: number): string =>
  `${type} ${nullable ? "NULL" : "NOT NULL"}${pk > 0 ? ` PK${pk}` : ""}`;

// SQLite keeps a column's declared type only as text and stores by its affinity (varchar(128) and
// TEXT are the same column), so affinity is what the two schemas must agree on (sqlite.org/datatype3).
function sqliteAffinity(declared: string): string {
  const type = declared.toUpperCase();
  if (type.includes("INT")) return "INTEGER";
  if (/CHAR|CLOB|TEXT/.test(type)) return "TEXT";
  if (type === "" || type.includes("BLOB")) return "BLOB";
  if (/REAL|FLOA|DOUB/.test(type)) return "REAL";
  return "NUMERIC";
}

async function tablesOf(dataSource: DataSource): Promise<string[]> {
  const rows = (await dataSource.query(
    dataSource.options.type === "mysql"
      ? "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  )) as { name: string }[];
  return rows.map((row) => row.name).sort();
}

/** The entities' schema: what synchronize creates from them in an empty database. */
async function entitySchema(url: string): Promise<DataSource> {
  const shape = createDataSource(url, { poolSize: 1 });
  const dataSource = new DataSource({ ...shape.options, migrations: [], synchronize: true });
  return dataSource.initialize();
}

function differences(migrated: Map<string, string>, entities: Map<string, string>): string[] {
  return [...new Set([...migrated.keys(), ...entities.keys()])]
    .filter((key) => migrated.get(key) !== entities.get(key))
    .map(
      (key) => `${key}: migrated ${migrated.get(key) ?? "absent"}, entities ${entities.get(key) ?? "absent"}`,
    )
    .sort();
}

describe.each([
  ["an SQLite file", sqliteDatabases],
  ["MariaDB", mariaDbDatabases],
])("every migration replayed on an empty database: %s", (_, make) => {
  const databases = make();
  let migrated: DataSource;
  afterAll(async () => {
    if (migrated?.isInitialized) await migrated.destroy();
    databases.cleanUp();
  });

  it("applies every migration file once, in order, and records each once", async () => {
    migrated = await createDataSource(await databases.emptyDatabase(), { poolSize: 1 }).initialize();
    const names = migrated.migrations.map((migration) => migration.name ?? migration.constructor.name);
    // Every migration file under src/storage/migrations/ is one the data source runs.
    const stamps = readdirSync(MIGRATIONS)
      .filter((file) => /^\d{13}-.+\.ts$/.test(file))
      .map((file) => file.slice(0, 13))
      .sort();
    expect(names.map((name) => name.slice(-13))).toEqual(stamps);

    expect(await runMigrations(migrated, { lockWaitMs: 10_000 })).toEqual({ applied: names });
    const recorded = (await migrated.query("SELECT name FROM schema_migrations ORDER BY id")) as {
      name: string;
    }[];
    expect(recorded.map((row) => row.name)).toEqual(names);
  });

  it("applies nothing the second time", async () => {
    expect(await runMigrations(migrated, { lockWaitMs: 10_000 })).toEqual({ applied: [] });
    const recorded = (await migrated.query("SELECT COUNT(*) AS n FROM schema_migrations")) as { n: number }[];
    expect(Number(recorded[0]?.n)).toBe(migrated.migrations.length);
  });

  it("leaves the schema the entities describe, but for the known differences", async () => {
    const entities = await entitySchema(await databases.emptyDatabase());
    try {
      const entityTables = migrated.entityMetadatas.map((metadata) => metadata.tableName).sort();
      expect(await tablesOf(entities)).toEqual(entityTables);
      expect(await tablesOf(migrated)).toEqual(
        [...entityTables, ...Object.keys(TABLES_WITHOUT_ENTITY)].sort(),
      );
      const found = differences(
        await columnsOf(migrated, entityTables),
        await columnsOf(entities, entityTables),
      );
      expect(found).toEqual(Object.keys(KNOWN[databases.dialect]).sort());
    } finally {
      await entities.destroy();
    }
  });
});
