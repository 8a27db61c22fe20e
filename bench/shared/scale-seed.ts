import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { createConnection } from "mysql2/promise";

/** Content of every seeded revision and HEAD: a plan of a few hundred bytes, as agents start them. */
export const SEED_CONTENT = `# Plan\n\n${Array.from({ length: 6 }, (_, i) => `- step ${i}: ${"x".repeat(40)}`).join("\n")}`;
const BYTES = Buffer.byteLength(SEED_CONTENT, "utf8");

/** Runs statements on the database a replica uses, as the seed needs them. */
interface Sink {
  run(sql: string, rows: unknown[][]): Promise<void>;
  close(): Promise<void>;
}

async function sinkFor(databaseUrl: string): Promise<Sink> {
  if (databaseUrl.startsWith("sqlite:")) {
    const db = new Database(databaseUrl.slice("sqlite:".length));
    db.pragma("busy_timeout = 10000");
    return {
      run: async (sql, rows) => {
        const statement = db.prepare(sql);
        db.transaction(() => {
          for (const row of rows) statement.run(...row);
        })();
      },
      close: async () => {
        db.close();
      },
    };
  }
  const connection = await createConnection({ uri: databaseUrl });
  return {
    run: async (sql, rows) => {
      const [head, values] = sql.split(" VALUES ");
      await connection.query(`${head} VALUES ${rows.map(() => values).join(", ")}`, rows.flat());
    },
    close: () => connection.end(),
  };
}

/**
 * Seeds `tasks` tasks of `revisions` revisions each (ids `prefix-<n>`), with the rows the service
 * writes for them: the task, HEAD at version `revisions` with its trimmed lengths and its history
 * usage kept (revisions x content bytes; no change rows), and revisions 1..N with random UUIDs, in
 * batches of 1,000 rows.
 */
export async function seedTasks(
  databaseUrl: string,
  prefix: string,
  tasks: number,
  revisions: number,
): Promise<void> {
  const sink = await sinkFor(databaseUrl);
  const at = Date.now() - 86_400_000;
  try {
    for (let from = 0; from < tasks; from += 1_000) {
      const ids = Array.from({ length: Math.min(1_000, tasks - from) }, (_, i) => `${prefix}-${from + i}`);
      await sink.run(
        "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', 'seeded', ?)",
        ids.map((id) => [id, at]),
      );
      await sink.run(
        "INSERT INTO task_plans (task_id, title, content, content_bytes, content_chars, content_trimmed_chars," +
          " content_trimmed_bytes, version, created_by, created_at, updated_at, latest_revision_number, deleted," +
          " history_revisions, history_bytes, history_version)" +
          " VALUES (?, 'Plan', ?, ?, ?, ?, ?, ?, 'agent', ?, ?, ?, 0, ?, ?, ?)",
        ids.map((id) => [
          id,
          SEED_CONTENT,
          BYTES,
          BYTES,
          BYTES,
          BYTES,
          revisions,
          at,
          at,
          revisions,
          revisions,
          revisions * BYTES,
          revisions,
        ]),
      );
      const rows = ids.flatMap((id) =>
        Array.from({ length: revisions }, (_, n) => [
          randomUUID(),
          id,
          n + 1,
          SEED_CONTENT,
          BYTES,
          BYTES,
          at,
          at,
        ]),
      );
      for (let r = 0; r < rows.length; r += 1_000)
        await sink.run(
          "INSERT INTO task_plan_revisions (id, task_id, revision_number, title, content, content_at_head," +
            " content_bytes, content_chars, author_kind, author_name, revert_of_revision_id, created_at, updated_at," +
            " row_version) VALUES (?, ?, ?, 'Plan', ?, 0, ?, ?, 'agent', 'seed', NULL, ?, ?, 1)",
          rows.slice(r, r + 1_000),
        );
    }
  } finally {
    await sink.close();
  }
}

/**
 * Seeds change rows past any age limit (two days old, no content): what a pass of the age rule
 * deletes. `count` rows: five on each of up to `count / 5` seeded tasks `<prefix>-<n>` (versions 1-5,
 * below their HEAD's), and the rest on idle tasks of 100 rows each, which it creates (`idle-<n>`).
 */
export async function seedOldChanges(
  databaseUrl: string,
  prefix: string,
  seeded: number,
  count: number,
): Promise<void> {
  const sink = await sinkFor(databaseUrl);
  const at = Date.now() - 2 * 86_400_000;
  try {
    const active = Math.min(seeded, Math.floor(count / 5));
    const rows: unknown[][] = [];
    for (let t = 0; t < active; t++) for (let v = 1; v <= 5; v++) rows.push([`${prefix}-${t}`, v, at]);
    const idle = Math.ceil((count - rows.length) / 100);
    for (let from = 0; from < idle; from += 1_000)
      await sink.run(
        "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', 'idle', ?)",
        Array.from({ length: Math.min(1_000, idle - from) }, (_, i) => [`idle-${from + i}`, at]),
      );
    for (let t = 0; rows.length < count; t++)
      for (let v = 1; v <= 100 && rows.length < count; v++) rows.push([`idle-${t}`, v, at]);
    for (let r = 0; r < rows.length; r += 1_000)
      await sink.run(
        "INSERT INTO task_plan_changes (task_id, version, step, kind, committed_at, plan, author_kind, author_name," +
          " stored_bytes) VALUES (?, ?, 0, 'updated', ?, '{}', 'agent', 'seed', 0)",
        rows.slice(r, r + 1_000),
      );
  } finally {
    await sink.close();
  }
}
