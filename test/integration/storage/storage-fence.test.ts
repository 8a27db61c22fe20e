import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { implementationStartedChange } from "../../../src/plans/changes/change-rows";
import { createDataSource, dialectOf } from "../../../src/storage/data-source";
import { runMigrations } from "../../../src/storage/migrations-runner";
import type { HeadRecord, RevisionRecord } from "../../../src/plans/ports/records";
import { StorageConflictError } from "../../../src/plans/ports/store-errors";
import { revisionContent } from "../../../src/storage/devices/content-at-head";
import { type ChangeContent, changeContentValues } from "../../../src/storage/devices/prefix-changes";
import type { SqlWriteTx } from "../../../src/storage/locked-task";
import { sqlDialect } from "../../../src/storage/sql-dialect";
import { insertChange } from "../../../src/storage/tables/changes";
import { insertHead, markHead, updateHead } from "../../../src/storage/tables/heads";
import { insertRevision, updateRevision } from "../../../src/storage/tables/revisions";
import { TypeOrmPlanStore } from "../../../src/storage/typeorm-plan-store";
import { createDatabase } from "../../harness/databases/mariadb";
import { FIXTURE_AT, headRecord, revisionRecord } from "../../harness/fixtures/records";
import { DATABASES } from "../../harness/servers/test-app";

const at = FIXTURE_AT;
// What the seeded task's history holds (kept with HEAD by every write; these tests write rows one by one).
const history = { revisions: 1, bytes: 2 };
const head = (taskId: string, version: number, content: string): HeadRecord =>
  headRecord(content, { taskId, version });
const revision = (taskId: string, number: number, content: string): RevisionRecord =>
  revisionRecord(content, { id: `${randomBytes(8).toString("hex")}-rev`, taskId, number });

// The change row of marking the seeded task's implementation started (version 1).
const markedChange = (taskId: string) =>
  implementationStartedChange(
    { ...head(taskId, 1, ""), content: undefined } as never,
    { kind: "user", name: "ci" },
    at,
  );

type ChangeRow = Parameters<typeof insertChange>[1];

// The row statements of one table at a time, which these tests send one by one (locked-task.ts
// sends them in a write's order).
function rowsOf(tx: SqlWriteTx, dialect: "mysql" | "sqlite") {
  const { statements } = tx;
  const sql = sqlDialect(dialect);
  return {
    insertHead: (row: HeadRecord, usage = history) => insertHead(statements, row, usage),
    updateHead: (row: HeadRecord, fence: number, usage = history) =>
      updateHead(statements, sql, row, fence, usage),
    markHead: (row: HeadRecord, usage = history) => markHead(statements, row, usage),
    insertRevision: (row: RevisionRecord) => insertRevision(statements, row, revisionContent(row, false)),
    updateRevision: (row: RevisionRecord, fence: number) =>
      updateRevision(statements, row, revisionContent(row, false), fence),
    recordChange: (change: ChangeRow, content: ChangeContent) =>
      insertChange(statements, change, changeContentValues(change, content)),
  };
}

// Each test seeds a task of its own (HEAD at version 1 with revision 1), so that none depends on
// what another left behind, nor on the order they run in.
describe.each(DATABASES)("the database fence on $label", ({ dialect }) => {
  let store: TypeOrmPlanStore;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "taskplans-fence-"));
    let url = `sqlite:${join(dir, "plans.sqlite")}`;
    if (dialect === "mysql") {
      const database = `f_${randomBytes(6).toString("hex")}`;
      await createDatabase(Number(process.env.TEST_MARIADB_PORT), database);
      url = `mysql://root@127.0.0.1:${process.env.TEST_MARIADB_PORT}/${database}`;
    }
    const dataSource = createDataSource(url, { poolSize: 4 });
    await dataSource.initialize();
    await runMigrations(dataSource, { lockWaitMs: 10_000 });
    await runMigrations(dataSource, { lockWaitMs: 10_000 }); // replayable
    store = new TypeOrmPlanStore(dataSource, dialectOf(url));
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function seeded(): Promise<string> {
    const taskId = `fenced-${randomBytes(6).toString("hex")}`;
    await store.createTask({ id: taskId, workspaceId: "ws", title: "", createdAt: at });
    await store.inTransaction(async (tx) => {
      rowsOf(tx, dialect).insertHead(head(taskId, 1, "v1"));
      rowsOf(tx, dialect).insertRevision(revision(taskId, 1, "v1"));
    });
    return taskId;
  }

  it("updates HEAD only where the version is still the fenced one; a stale fence changes nothing", async () => {
    const taskId = await seeded();
    await store.inTransaction(async (tx) => rowsOf(tx, dialect).updateHead(head(taskId, 2, "v2"), 1));
    await expect(
      store.inTransaction(async (tx) => rowsOf(tx, dialect).updateHead(head(taskId, 3, "stale writer"), 1)),
    ).rejects.toBeInstanceOf(StorageConflictError);
    expect(await store.getPlan(taskId)).toMatchObject({ version: 2, content: "v2" });
  });

  it("refuses the whole write when its fence is lost: the rows written before and after the fenced one are rolled back", async () => {
    const taskId = await seeded();
    const change = markedChange(taskId);
    await expect(
      store.inTransaction(async (tx) => {
        rowsOf(tx, dialect).recordChange(
          { ...change, version: 2, step: 0, kind: "updated" },
          { form: "none" },
        );
        rowsOf(tx, dialect).updateHead(head(taskId, 3, "stale writer"), 2);
        rowsOf(tx, dialect).insertRevision(revision(taskId, 2, "v3"));
      }),
    ).rejects.toThrow(new StorageConflictError("plan version fence lost"));
    expect(await store.getPlan(taskId)).toMatchObject({ version: 1, content: "v1" });
    expect(await store.listRevisions(taskId, null, 10)).toHaveLength(1);
    expect(await store.readChanges(taskId, { version: 0, step: 1 }, 10, false)).toEqual([]);
  });

  it("rejects a second revision with the same number (UNIQUE(task_id, revision_number))", async () => {
    const taskId = await seeded();
    await expect(
      store.inTransaction(async (tx) => rowsOf(tx, dialect).insertRevision(revision(taskId, 1, "dup"))),
    ).rejects.toBeInstanceOf(StorageConflictError);
    expect(await store.listRevisions(taskId, null, 10)).toHaveLength(1);
  });

  it("fences the in-place revision update on its row version", async () => {
    const taskId = await seeded();
    const latest = (await store.inTransaction((tx) => tx.read(taskId, { reads: "content" })))?.state.latest;
    if (!latest) throw new Error("no revision");
    await store.inTransaction(async (tx) =>
      rowsOf(tx, dialect).updateRevision({ ...latest, content: "merged", contentBytes: 6, rowVersion: 2 }, 1),
    );
    await expect(
      store.inTransaction(async (tx) =>
        rowsOf(tx, dialect).updateRevision({ ...latest, content: "late", contentBytes: 4, rowVersion: 2 }, 1),
      ),
    ).rejects.toBeInstanceOf(StorageConflictError);
    expect((await store.getRevision(taskId, latest.id))?.content).toBe("merged");
  });

  it("rolls back the HEAD update when a later step of the same write fails (one write = one transaction)", async () => {
    const taskId = await seeded();
    await expect(
      store.inTransaction(async (tx) => {
        rowsOf(tx, dialect).updateHead(head(taskId, 2, "half-written"), 1);
        rowsOf(tx, dialect).insertRevision(revision(taskId, 1, "collides"));
      }),
    ).rejects.toBeInstanceOf(StorageConflictError);
    expect(await store.getPlan(taskId)).toMatchObject({ version: 1, content: "v1" });
  });

  it("records one change per version: a second change for a version is refused, and a rolled-back write leaves none", async () => {
    const taskId = await seeded();
    const change = markedChange(taskId);
    await store.inTransaction(async (tx) => rowsOf(tx, dialect).recordChange(change, { form: "head" }));
    await expect(
      store.inTransaction(async (tx) => rowsOf(tx, dialect).recordChange(change, { form: "none" })),
    ).rejects.toBeInstanceOf(StorageConflictError);
    await expect(
      store.inTransaction(async (tx) => {
        rowsOf(tx, dialect).updateHead(head(taskId, 2, "v2"), 1);
        rowsOf(tx, dialect).recordChange(
          { ...change, version: 2, step: 0, kind: "updated" },
          { form: "head" },
        );
        rowsOf(tx, dialect).insertRevision(revision(taskId, 1, "collides"));
      }),
    ).rejects.toBeInstanceOf(StorageConflictError);
    const changes = await store.readChanges(taskId, { version: 0, step: 1 }, 10, true);
    expect(changes.map((c) => [c.version, c.step, c.kind, c.content])).toEqual([
      [1, 1, "implementation-started", "v1"],
    ]);
  });

  it("sets the implementation-started mark once: a second mark at the same version finds its fence lost", async () => {
    const taskId = await seeded();
    const marked = (by: string) => ({
      ...head(taskId, 1, "v1"),
      implementationStartedAt: at,
      implementationStartedBy: by,
      implementationStartedSessionId: "s",
    });
    await store.inTransaction(async (tx) => rowsOf(tx, dialect).markHead(marked("first")));
    await expect(
      store.inTransaction(async (tx) => rowsOf(tx, dialect).markHead(marked("second"))),
    ).rejects.toThrow(new StorageConflictError("plan version or implementation-started fence lost"));
    expect(await store.getPlan(taskId)).toMatchObject({
      version: 1,
      content: "v1",
      implementationStartedBy: "first",
    });
  });
});
