import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { DataSource } from "typeorm";
import { createDataSource, sqliteConnection } from "../../../src/storage/data-source";
import { runMigrations } from "../../../src/storage/migrations-runner";
import { waitFor } from "../../harness/servers/processes";
import { TypeOrmPlanStore } from "../../../src/storage/typeorm-plan-store";
import {
  type CheckpointPass,
  type CheckpointSettings,
  WalCheckpointer,
} from "../../../src/storage/wal-checkpointer";

const TASKS = 4_000;
// Commits made while a reader holds its snapshot: about 1,600 log frames (two per commit), past 1,024.
const HELD_TASKS = 800;
const at = new Date("2026-12-01T00:00:00Z");

/** What 4,000 commits through a store with background checkpoints did to the log and the database. */
interface Outcome {
  readonly autocheckpointWhileOpen: unknown;
  readonly synchronousWhileOpen: unknown;
  readonly passes: readonly CheckpointPass[];
  readonly failures: readonly string[];
  readonly walPeak: number;
  readonly walLeftAfterClose: boolean;
  readonly tasksStored: unknown;
}

async function commitThroughStore(dir: string, settings: CheckpointSettings): Promise<Outcome> {
  const file = join(dir, `plans-${settings.restartFrames}.sqlite`);
  const dataSource: DataSource = createDataSource(`sqlite:${file}`, { poolSize: 1 });
  await dataSource.initialize();
  await runMigrations(dataSource, { lockWaitMs: 10_000 });
  const passes: CheckpointPass[] = [];
  const failures: string[] = [];
  const store = new TypeOrmPlanStore(dataSource, "sqlite", {
    walCheckpoints: { settings, onPass: (pass) => passes.push(pass), onFailure: (r) => failures.push(r) },
  });
  let walPeak = 0;
  let reader: Database.Database | null = null;
  let autocheckpointWhileOpen: unknown;
  let synchronousWhileOpen: unknown;
  try {
    const main = sqliteConnection(dataSource);
    autocheckpointWhileOpen = main.pragma("wal_autocheckpoint", { simple: true });
    synchronousWhileOpen = main.pragma("synchronous", { simple: true });
    await waitFor("the worker's first pass", async () => passes.length > 0, 10_000);
    // Every task is one commit; the log's file never shrinks, so its size is its peak. Between two
    // commits the event loop turns, as it does between the calls a server serves.
    // A reader holds a snapshot over the first commits, as a long read does: no checkpoint can
    // complete meanwhile, so the log grows past the restart bound however fast the worker is (a
    // worker that keeps up lets SQLite wrap the log before it ever reaches 1,024 frames).
    reader = new Database(file, { readonly: true });
    reader.prepare("BEGIN").run();
    reader.prepare("SELECT COUNT(*) FROM tasks").get();
    for (let i = 0; i < TASKS; i++) {
      if (i === HELD_TASKS) reader.close();
      await store.createTask({ id: `wal-${i}`, workspaceId: "ws", title: "", createdAt: at });
      await new Promise((resolve) => setImmediate(resolve));
      walPeak = Math.max(walPeak, statSync(`${file}-wal`).size);
    }
    await waitFor(
      "a complete checkpoint",
      async () => passes.some((p) => p.log > 0 && p.checkpointed === p.log),
      10_000,
    );
  } finally {
    if (reader?.open) reader.close();
    await store.close();
  }
  const db = new Database(file, { readonly: true });
  try {
    return {
      autocheckpointWhileOpen,
      synchronousWhileOpen,
      passes,
      failures,
      walPeak,
      walLeftAfterClose: existsSync(`${file}-wal`),
      tasksStored: db.prepare("SELECT COUNT(*) AS n FROM tasks WHERE id LIKE 'wal-%'").get(),
    };
  } finally {
    db.close();
  }
}

describe("SQLite's write-ahead log, checkpointed on a worker thread", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "taskplans-wal-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([{ restartFrames: 1024 }, { restartFrames: 64 }])(
    "commits do not checkpoint; the worker does, and restarts the log past $restartFrames frames",
    async ({ restartFrames }) => {
      const outcome = await commitThroughStore(dir, { intervalMs: 5, restartFrames, restartWaitMs: 100 });
      expect(outcome.autocheckpointWhileOpen).toBe(0);
      // NORMAL (1) on a new file too: commits do not sync the log, so they never wait behind the
      // worker's sync of the database file.
      expect(outcome.synchronousWhileOpen).toBe(1);
      expect(outcome.failures).toEqual([]);
      expect(outcome.passes.filter((p) => p.restart).length).toBeGreaterThan(0);
      // Without checkpoints, 4,000 commits leave a log of about 35 MiB (a page of the table and one
      // of its index each, 4 KiB apiece), and 30 to 46 MiB without the RESTART. With it, 2 to 6 MiB
      // were seen; the bound leaves room for a loaded machine, where passes come late.
      expect(outcome.walPeak).toBeLessThan(16 * 1024 * 1024);
      // The last connection to close checkpoints the rest and removes the log; nothing is lost.
      expect(outcome.walLeftAfterClose).toBe(false);
      expect(outcome.tasksStored).toEqual({ n: TASKS });
    },
  );

  it("a worker that fails hands checkpointing back to the commits, and says why", async () => {
    const main = new Database(join(dir, "other.sqlite"));
    main.pragma("journal_mode = WAL");
    const reasons: string[] = [];
    const checkpoints = WalCheckpointer.start(
      main,
      join(dir, "missing", "plans.sqlite"),
      { intervalMs: 5, restartFrames: 64, restartWaitMs: 100 },
      { onFailure: (reason) => reasons.push(reason) },
    );
    try {
      expect(main.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
      await waitFor("the failure", async () => reasons.length > 0, 10_000);
      expect(reasons[0]).toMatch(/directory does not exist|unable to open/);
      expect(main.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    } finally {
      await checkpoints.stop();
      main.close();
    }
  });
});
