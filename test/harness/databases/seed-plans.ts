import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { createConnection } from "mysql2/promise";

/** Content of every seeded revision and HEAD: a plan of a few hundred bytes, as agents start them. */
const CONTENT = `# Plan\n\n${Array.from({ length: 6 }, (_, i) => `- step ${i}: ${"x".repeat(40)}`).join("\n")}`;
const BYTES = Buffer.byteLength(CONTENT, "utf8");

/**
 * Seeds `tasks` tasks (ids `<prefix>-<n>`) of `revisions` revisions each straight into a migrated
 * database with no server writing it, with the rows the service writes for them: the task, HEAD at
 * version `revisions` with its history usage kept (revisions x content bytes) and its revisions; no
 * change rows (as after the age rule pruned them). In transactions of 1,000 tasks. Resolves the
 * content every seeded plan holds.
 */
export async function seedPlans(
  databaseUrl: string,
  prefix: string,
  tasks: number,
  revisions: number,
): Promise<string> {
  const at = Date.now() - 86_400_000;
  const batches: unknown[][][][] = [];
  for (let from = 0; from < tasks; from += 1_000) {
    const ids = Array.from({ length: Math.min(1_000, tasks - from) }, (_, i) => `${prefix}-${from + i}`);
    batches.push([
      ids.map((id) => [id, at]),
      ids.map((id) => [
        id,
        CONTENT,
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
      ids.flatMap((id) =>
        Array.from({ length: revisions }, (_, n) => [randomUUID(), id, n + 1, CONTENT, BYTES, BYTES, at, at]),
      ),
    ]);
  }
  const statements = [
    "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', 'seeded', ?)",
    "INSERT INTO task_plans (task_id, title, content, content_bytes, content_chars, content_trimmed_chars," +
      " content_trimmed_bytes, version, created_by, created_at, updated_at, latest_revision_number, deleted," +
      " history_revisions, history_bytes, history_version)" +
      " VALUES (?, 'Plan', ?, ?, ?, ?, ?, ?, 'agent', ?, ?, ?, 0, ?, ?, ?)",
    "INSERT INTO task_plan_revisions (id, task_id, revision_number, title, content, content_at_head," +
      " content_bytes, content_chars, author_kind, author_name, revert_of_revision_id, created_at, updated_at," +
      " row_version) VALUES (?, ?, ?, 'Plan', ?, 0, ?, ?, 'agent', 'seed', NULL, ?, ?, 1)",
  ];
  if (databaseUrl.startsWith("sqlite:")) {
    const db = new Database(databaseUrl.slice("sqlite:".length));
    try {
      db.pragma("busy_timeout = 10000");
      const prepared = statements.map((sql) => db.prepare(sql));
      for (const batch of batches)
        db.transaction(() => batch.forEach((rows, i) => rows.forEach((row) => prepared[i]?.run(...row))))();
    } finally {
      db.close();
    }
    return CONTENT;
  }
  const connection = await createConnection({ uri: databaseUrl });
  try {
    for (const batch of batches) {
      await connection.beginTransaction();
      for (const [i, rows] of batch.entries()) {
        const [head, values] = (statements[i] ?? "").split(" VALUES ");
        await connection.query(`${head} VALUES ${rows.map(() => values).join(", ")}`, rows.flat());
      }
      await connection.commit();
    }
  } finally {
    await connection.end();
  }
  return CONTENT;
}
