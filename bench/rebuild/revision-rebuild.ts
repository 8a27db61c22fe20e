/**
 * Benchmark (not a test): how long migration RevisionLocality1765200000000 takes on a populated
 * MariaDB (it rebuilds task_plan_revisions in place), and that the table takes writes meanwhile.
 * Seeds `REBUILD_TASKS` tasks of 10 revisions (default 100,000: 1,000,000 revisions), undoes the
 * migration (itself a rebuild), then times applying it again while one connection inserts revisions
 * of a task of its own, and prints the time and how many inserts went through during it.
 *
 *   npm run bench:rebuild
 */
import { randomUUID } from "node:crypto";
import { createConnection } from "mysql2/promise";
import { createDataSource } from "../../src/storage/data-source";
import { runMigrations } from "../../src/storage/migrations-runner";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { SEED_CONTENT, seedTasks } from "../shared/scale-seed";

const TASKS = Number(process.env.REBUILD_TASKS ?? 100_000);

async function main(): Promise<void> {
  const mariadb = await startMariaDb({ durable: true });
  try {
    await createDatabase(mariadb.port, "rebuild");
    const url = mariadb.urlFor("rebuild");
    const dataSource = createDataSource(url, { poolSize: 1 });
    await dataSource.initialize();
    try {
      await runMigrations(dataSource, { lockWaitMs: 10_000 });
      await seedTasks(url, "t", TASKS, 10);
      await dataSource.undoLastMigration({ transaction: "each" });
      const writer = await createConnection({ uri: url });
      await writer.query(
        "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES ('writer', 'ws', '', 0)",
      );
      let inserts = 0;
      let running = true;
      const writing = (async () => {
        while (running) {
          await writer.query(
            "INSERT INTO task_plan_revisions (id, task_id, revision_number, title, content, content_at_head," +
              " content_bytes, content_chars, author_kind, author_name, created_at, updated_at, row_version)" +
              " VALUES (?, 'writer', ?, 'Plan', ?, 0, 1, 1, 'agent', 'bench', 0, 0, 1)",
            [randomUUID(), inserts + 1, SEED_CONTENT],
          );
          inserts += 1;
        }
      })();
      const started = performance.now();
      const outcome = await runMigrations(dataSource, { lockWaitMs: 10_000 });
      const seconds = (performance.now() - started) / 1000;
      running = false;
      await writing;
      await writer.end();
      console.log(
        `${outcome.applied.join(", ")} on ${TASKS * 10} revisions: ${seconds.toFixed(1)} s;` +
          ` ${inserts} revisions inserted by another connection meanwhile`,
      );
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await mariadb.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
