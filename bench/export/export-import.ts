/**
 * Benchmark (not a test): planctl export and import rates (issue 46). For each database (SQLite,
 * then MariaDB) it seeds EXPORT_TASKS tasks (default 10,000) of 20 revisions each into a source
 * database (the rows the service writes, bench/shared/scale-seed.ts), starts a source and a target
 * replica (the built server, dist/src/bin/main.js), runs the built `planctl export` of the workspace to a
 * file and `planctl import` of that file into the empty target, as processes, and prints each run's
 * summary: tasks/s and MiB/s of plan text (HEAD and every revision), with the file's size.
 *
 *   npm run bench:export                      # 10,000 tasks x 20 revisions on both databases
 *   EXPORT_TASKS=1000 npm run bench:export    # a smaller run
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDataSource } from "../../src/storage/data-source";
import { runMigrations } from "../../src/storage/migrations-runner";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startReplica } from "../../test/harness/servers/replica";
import { repoRoot } from "../../test/harness/servers/repo-root";
import { seedTasks } from "../shared/scale-seed";

const TASKS = Number(process.env.EXPORT_TASKS ?? 10_000);
const REVISIONS = 20;
const PLANCTL = join(repoRoot(), "cli", "dist", "main.js");

interface Summary {
  readonly tasks: number;
  readonly revisions: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly tasks_per_second: number;
  readonly mib_per_second: number;
}

/** Runs the built planctl with `args`; its `-o json` summary (stdout, or stderr for an export to stdout). */
function planctl(args: readonly string[]): Promise<Summary> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PLANCTL, ...args, "-o", "json", "--timeout", "120000"], {
      env: { ...process.env, NO_PROGRESS: "1" },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(out) as Summary)
        : reject(new Error(`planctl ${args.join(" ")} exited ${code}: ${err}`)),
    );
  });
}

async function migrated(url: string): Promise<void> {
  const dataSource = createDataSource(url, { poolSize: 1 });
  await dataSource.initialize();
  try {
    await runMigrations(dataSource, { lockWaitMs: 10_000 });
  } finally {
    await dataSource.destroy();
  }
}

async function measure(label: string, source: string, target: string, dir: string): Promise<void> {
  await migrated(source);
  await migrated(target);
  const seeding = performance.now();
  await seedTasks(source, "t", TASKS, REVISIONS);
  const seeded = ((performance.now() - seeding) / 1000).toFixed(1);
  const from = await startReplica({ PLAN_DATABASE_URL: source }, dir, null, { name: `${label}-source` });
  const to = await startReplica({ PLAN_DATABASE_URL: target }, dir, null, { name: `${label}-target` });
  try {
    const file = join(dir, `${label}.jsonl`);
    const exported = await planctl([
      "export",
      "--workspace",
      "ws",
      "-f",
      file,
      "--target",
      `127.0.0.1:${from.port}`,
    ]);
    const imported = await planctl(["import", file, "--target", `127.0.0.1:${to.port}`]);
    const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    for (const [what, run] of [
      ["export", exported],
      ["import", imported],
    ] as const)
      console.log(
        `${label.padEnd(8)} ${what}: ${run.tasks} tasks, ${run.revisions} revisions, ${mib(run.bytes)} MiB of plan text` +
          ` in ${run.seconds.toFixed(1)} s = ${run.tasks_per_second.toFixed(0)} tasks/s, ${run.mib_per_second.toFixed(2)} MiB/s`,
      );
    console.log(`${label.padEnd(8)} file: ${mib(statSync(file).size)} MiB; seeded in ${seeded} s`);
  } finally {
    await from.stop();
    await to.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-bench-export-"));
  console.log(
    `planctl export and import: ${TASKS} tasks x ${REVISIONS} revisions (EXPORT_TASKS), planctl processes with their default --parallel 4`,
  );
  try {
    await measure(
      "SQLite",
      `sqlite:${join(dir, "source.sqlite")}`,
      `sqlite:${join(dir, "target.sqlite")}`,
      dir,
    );
    const mariadb = await startMariaDb({ durable: true });
    try {
      await createDatabase(mariadb.port, "export_source");
      await createDatabase(mariadb.port, "export_target");
      await measure("MariaDB", mariadb.urlFor("export_source"), mariadb.urlFor("export_target"), dir);
    } finally {
      await mariadb.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
