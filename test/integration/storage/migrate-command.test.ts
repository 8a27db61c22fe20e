import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Connection, createConnection } from "mysql2/promise";
import { MIGRATION_LOCK_NAME_SQL } from "../../../src/storage/migrations-runner";
import { freePort } from "../../harness/servers/free-port";
import { createDatabase } from "../../harness/databases/mariadb";
import { type CommandResult, runToExit } from "../../harness/servers/processes";
import { type Replica, startReplica } from "../../harness/servers/replica";

// `node dist/src/bin/migrate.js` is the exact command of the Helm chart's migration Job (and what
// `npm run migrate` runs after building); these tests run that file as a process, as the Job does.
const ROOT = join(__dirname, "..", "..", "..");
const MIGRATE = ["node", join(ROOT, "dist", "src", "bin", "migrate.js")];
const PORT = Number(process.env.TEST_MARIADB_PORT);
const TABLES = [
  "schema_migrations",
  "task_plan_changes",
  "task_plans",
  "task_plan_revisions",
  "tasks",
  "write_requests",
].sort();

const newDatabase = async (): Promise<string> => {
  const name = `m_${randomBytes(6).toString("hex")}`;
  await createDatabase(PORT, name);
  return name;
};
const urlOf = (database: string) => `mysql://root@127.0.0.1:${PORT}/${database}`;

// A migration that hangs is killed after 60 s, well under the Job's activeDeadlineSeconds (300).
function migrate(database: string, env: Record<string, string> = {}): Promise<CommandResult> {
  return runToExit(MIGRATE, {
    env: { ...process.env, PLAN_DATABASE_URL: urlOf(database), ...env },
    timeoutMs: 60_000,
  });
}

async function schemaOf(database: string): Promise<{ tables: string[]; migrations: string[] }> {
  const connection = await createConnection({ host: "127.0.0.1", port: PORT, user: "root", database });
  try {
    const [tables] = (await connection.query("SHOW TABLES")) as unknown as [Record<string, string>[]];
    const names = tables.map((row) => Object.values(row)[0] ?? "").sort();
    if (!names.includes("schema_migrations")) return { tables: names, migrations: [] };
    const [rows] = (await connection.query("SELECT name FROM schema_migrations ORDER BY id")) as unknown as [
      { name: string }[],
    ];
    return { tables: names, migrations: rows.map((row) => row.name) };
  } finally {
    await connection.end();
  }
}

/** Holds a database's migration lock, as a migration in progress there would. */
async function holdMigrationLock(database: string): Promise<Connection> {
  const connection = await createConnection({ host: "127.0.0.1", port: PORT, user: "root", database });
  await connection.query(`SELECT GET_LOCK(${MIGRATION_LOCK_NAME_SQL}, 0)`);
  return connection;
}

const oneLine = (text: string) => text.trim().split("\n");

describe("the migration command (node dist/src/bin/migrate.js) on MariaDB", () => {
  it("completes on an empty database with exit 0, and applies nothing the second time", async () => {
    const database = await newDatabase();
    const first = await migrate(database);
    expect([first.code, first.stderr]).toEqual([0, ""]);
    expect(first.stdout).toBe(
      "migrations applied: InitialSchema1764400000000, WriteRequests1764500000000, AppendComposition1764600000000, PlanChanges1764700000000, ChangeContentPrefix1764800000000, RevisionContentAtHead1764900000000, ChangeStoredBytes1765000000000, HistoryUsage1765100000000, RevisionLocality1765200000000, RevisionMergeMarker1765300000000, ChecklistProgress1765400000000\n",
    );
    const schema = await schemaOf(database);
    expect(schema).toEqual({
      tables: TABLES,
      migrations: [
        "InitialSchema1764400000000",
        "WriteRequests1764500000000",
        "AppendComposition1764600000000",
        "PlanChanges1764700000000",
        "ChangeContentPrefix1764800000000",
        "RevisionContentAtHead1764900000000",
        "ChangeStoredBytes1765000000000",
        "HistoryUsage1765100000000",
        "RevisionLocality1765200000000",
        "RevisionMergeMarker1765300000000",
        "ChecklistProgress1765400000000",
      ],
    });
    const second = await migrate(database);
    expect([second.code, second.stdout, second.stderr]).toEqual([
      0,
      "schema is current: nothing to apply\n",
      "",
    ]);
    expect(await schemaOf(database)).toEqual(schema);
  });

  it("stores one task's revisions together: the revisions' primary key leads with the task, ids stay unique", async () => {
    const database = await newDatabase();
    expect((await migrate(database)).code).toBe(0);
    const connection = await createConnection({ host: "127.0.0.1", port: PORT, user: "root", database });
    try {
      const [keys] = (await connection.query(
        "SELECT index_name, non_unique, GROUP_CONCAT(column_name ORDER BY seq_in_index) AS columns" +
          " FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'task_plan_revisions'" +
          " GROUP BY index_name, non_unique ORDER BY index_name",
      )) as unknown as [{ index_name: string; non_unique: number; columns: string }[]];
      expect(keys.map((k) => [k.index_name, Number(k.non_unique), k.columns])).toEqual([
        ["PRIMARY", 0, "task_id,revision_number"],
        ["uq_revisions_id", 0, "id"],
      ]);
    } finally {
      await connection.end();
    }
  });

  it("two migrate processes and two servers migrating on start, launched at once, all succeed with one schema", async () => {
    const database = await newDatabase();
    const logDir = mkdtempSync(join(tmpdir(), "taskplans-migrate-race-"));
    const replicas: Replica[] = [];
    try {
      const server = () =>
        startReplica({ PLAN_DATABASE_URL: urlOf(database), PLAN_MIGRATE_ON_START: "true" }, logDir).then(
          (replica) => (replicas.push(replica), replica.port),
        );
      const [a, b] = await Promise.all([migrate(database), migrate(database), server(), server()]);
      expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, "", ""]);
      expect(replicas).toHaveLength(2);
      expect(await schemaOf(database)).toEqual({
        tables: TABLES,
        migrations: [
          "InitialSchema1764400000000",
          "WriteRequests1764500000000",
          "AppendComposition1764600000000",
          "PlanChanges1764700000000",
          "ChangeContentPrefix1764800000000",
          "RevisionContentAtHead1764900000000",
          "ChangeStoredBytes1765000000000",
          "HistoryUsage1765100000000",
          "RevisionLocality1765200000000",
          "RevisionMergeMarker1765300000000",
          "ChecklistProgress1765400000000",
        ],
      });
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
      rmSync(logDir, { recursive: true, force: true });
    }
  });

  it("counts the checklist of each live plan written before it was counted, once, fenced on its version", async () => {
    const database = await newDatabase();
    expect((await migrate(database)).code).toBe(0);
    const connection = await createConnection({ host: "127.0.0.1", port: PORT, user: "root", database });
    try {
      // Plans as a release that did not count them left them: no checklist columns set.
      const plans: [string, string, number][] = [
        ["a", "# A\n\n- [x] one\n- [ ] two\n", 0],
        ["b", "# B\n\nNo boxes.\n", 0],
        ["c", "", 1],
        ["d", "```\n- [x] code\n", 0],
        // Long enough to be counted on the counting thread, as the built command runs it.
        [
          "e",
          Array.from({ length: 300 }, (_, i) => `- [${i % 3 === 0 ? "x" : " "}] step ${i}\n`).join(""),
          0,
        ],
      ];
      for (const [id, content, deleted] of plans) {
        await connection.query(
          "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'w', '', 0)",
          [id],
        );
        await connection.query(
          "INSERT INTO task_plans (task_id, title, content, content_bytes, content_chars, version, created_by," +
            " created_at, updated_at, latest_revision_number, deleted) VALUES (?, 'Plan', ?, ?, ?, 3, 'agent', 0, 0, 1, ?)",
          [id, content, Buffer.byteLength(content), [...content].length, deleted],
        );
      }
      const first = await migrate(database);
      expect([first.code, first.stdout, first.stderr]).toEqual([
        0,
        "schema is current: nothing to apply\nchecklist progress counted: 4 plans\n",
        "",
      ]);
      const [rows] = (await connection.query(
        "SELECT task_id, checklist_checked, checklist_total, checklist_open_end, checklist_version FROM task_plans ORDER BY task_id",
      )) as unknown as [Record<string, unknown>[]];
      expect(rows.map((r) => Object.values(r).map((v) => (v === null ? null : String(v))))).toEqual([
        ["a", "1", "2", "0", "3"],
        ["b", "0", "0", "0", "3"],
        ["c", null, null, null, null],
        ["d", "0", "0", "1", "3"],
        ["e", "100", "300", "0", "3"],
      ]);
      const second = await migrate(database);
      expect([second.code, second.stdout]).toEqual([0, "schema is current: nothing to apply\n"]);
    } finally {
      await connection.end();
    }
  });

  it("migrating database A does not wait for a migration in progress on database B of the same server", async () => {
    const [a, b] = [await newDatabase(), await newDatabase()];
    const holder = await holdMigrationLock(b);
    try {
      const result = await migrate(a, { PLAN_MIGRATION_LOCK_WAIT_MS: "5000" });
      expect([result.code, result.stderr]).toEqual([0, ""]);
      expect((await schemaOf(a)).migrations).toHaveLength(11);
    } finally {
      await holder.end();
    }
  });

  it("exits 1 with one line naming the cause when another migration holds the lock past the wait", async () => {
    const database = await newDatabase();
    const holder = await holdMigrationLock(database);
    try {
      const result = await migrate(database, { PLAN_MIGRATION_LOCK_WAIT_MS: "1000" });
      expect(result.code).toBe(1);
      expect(oneLine(result.stderr)).toEqual([
        `migration failed: could not take the migration lock of database ${database} within 1000 ms ` +
          "(another migration holds it; PLAN_MIGRATION_LOCK_WAIT_MS)",
      ]);
      expect((await schemaOf(database)).tables).toEqual([]); // nothing was migrated
    } finally {
      await holder.end();
    }
  });

  it("exits 1 with one line when the database is unreachable", async () => {
    const closedPort = await freePort();
    const result = await runToExit(MIGRATE, {
      env: { ...process.env, PLAN_DATABASE_URL: `mysql://root@127.0.0.1:${closedPort}/nothing` },
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toEqual([
      expect.stringMatching(/^migration failed: database unreachable: .*ECONNREFUSED/),
    ]);
  });

  it("exits 1 naming the migration that failed, and records nothing for it", async () => {
    const database = await newDatabase();
    const connection = await createConnection({ host: "127.0.0.1", port: PORT, user: "root", database });
    await connection.query("CREATE TABLE tasks (id INT PRIMARY KEY)"); // a conflicting leftover
    await connection.end();
    const result = await migrate(database);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toEqual([
      "migration failed: migration InitialSchema1764400000000 failed: Table 'tasks' already exists",
    ]);
    expect((await schemaOf(database)).migrations).toEqual([]);
  });

  it("exits 1 with one line on invalid configuration", async () => {
    const result = await runToExit(MIGRATE, {
      env: { ...process.env, PLAN_DATABASE_URL: "postgres://x" },
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toEqual([
      expect.stringMatching(/^migration failed: invalid configuration: PLAN_DATABASE_URL must be/),
    ]);
  });
});
