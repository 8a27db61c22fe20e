import { randomBytes } from "node:crypto";
import type { DataSource } from "typeorm";
import { StorageConflictError, StorageUnavailableError } from "../../src/plans/ports/store-errors";
import { createDataSource } from "../../src/storage/data-source";
import type { Send } from "../../src/storage/hot-statement";
import { runMigrations } from "../../src/storage/migrations-runner";
import { classifyStorageError } from "../../src/storage/storage-errors";
import { TypeOrmPlanStore } from "../../src/storage/typeorm-plan-store";
import { ROW_LOCK_WAIT_SECONDS, type UnitOfWork, unitOfWork } from "../../src/storage/unit-of-work";
import { createDatabase } from "../harness/mariadb";
import { FIXTURE_AT, headRecord, revisionRecord } from "../harness/records";
import { execSql } from "../harness/sql";

// One pooled connection: every transaction runs on the connection the one before it gave back, so
// whatever a failed one left on it (an open transaction, its rows) would show in the next.
describe("a write transaction on a pooled MariaDB connection", () => {
  let url: string;
  let dataSource: DataSource;
  let transactions: UnitOfWork;
  let store: TypeOrmPlanStore;

  beforeAll(async () => {
    const database = `u_${randomBytes(6).toString("hex")}`;
    await createDatabase(Number(process.env.TEST_MARIADB_PORT), database);
    url = `mysql://root@127.0.0.1:${process.env.TEST_MARIADB_PORT}/${database}`;
    dataSource = createDataSource(url, { poolSize: 1 });
    await dataSource.initialize();
    await runMigrations(dataSource, { lockWaitMs: 10_000 });
    transactions = unitOfWork(dataSource, "mysql");
    store = new TypeOrmPlanStore(dataSource, "mysql");
  });
  afterAll(async () => {
    await store.close();
  });

  const newTaskId = () => `uow-${randomBytes(6).toString("hex")}`;
  const insertTask = (send: Send, id: string) =>
    send("INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', '', ?)", [
      id,
      FIXTURE_AT.getTime(),
    ]);
  const storedTasks = async (ids: string[]) =>
    (
      (await execSql(url, `SELECT id FROM tasks WHERE id IN (${ids.map(() => "?").join(", ")}) ORDER BY id`, [
        ...ids,
      ])) as { id: string }[]
    ).map((row) => row.id);
  // What the next transaction finds on the connection it is given.
  const session = (send: Send) =>
    send(
      "SELECT CONNECTION_ID() AS id, @@SESSION.tx_isolation AS isolation," +
        " @@SESSION.innodb_lock_wait_timeout AS lockWait, @@in_transaction AS inTransaction",
      [],
    ).then(
      ({ rows }) => rows[0] as { id: number; isolation: string; lockWait: number; inTransaction: number },
    );

  it("leaves nothing behind when its work throws, and the connection serves the next write in READ COMMITTED", async () => {
    const [failed, next] = [newTaskId(), newTaskId()];
    let failedOn = -1;
    await expect(
      transactions.run(async (send) => {
        failedOn = (await session(send)).id;
        await insertTask(send, failed);
        throw new Error("the work failed");
      }),
    ).rejects.toThrow("the work failed");

    const reused = await transactions.run(async (send) => {
      await insertTask(send, next);
      return session(send);
    });
    expect(reused).toEqual({
      id: failedOn,
      isolation: "READ-COMMITTED",
      lockWait: ROW_LOCK_WAIT_SECONDS,
      inTransaction: 1,
    });
    expect(await storedTasks([failed, next])).toEqual([next]);
  });

  it("rolls back its earlier statements when one of its statements fails", async () => {
    const [taskId, next] = [newTaskId(), newTaskId()];
    const failure = await transactions
      .run(async (send) => {
        await insertTask(send, taskId);
        await insertTask(send, taskId);
      })
      .catch((error: unknown) => error);
    // The driver's own error, which the store classifies as before (a duplicate key is a conflict).
    expect(failure).toMatchObject({ errno: 1062 });
    expect(classifyStorageError(failure)).toBeInstanceOf(StorageConflictError);
    await transactions.run((send) => insertTask(send, next));
    expect(await storedTasks([taskId, next])).toEqual([next]);
  });

  it("refuses a statement sent after the transaction ended (it would run outside it, or in the next write)", async () => {
    const sends: Send[] = [];
    await transactions.run(async (send) => {
      sends.push(send);
    });
    const taskId = newTaskId();
    await expect(
      sends[0]?.(`INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', '', 0)`, [taskId]),
    ).rejects.toThrow("the write transaction has ended");
    expect(await storedTasks([taskId])).toEqual([]);
  });

  it("rolls back a store write whose later step fails: no HEAD, no revision", async () => {
    const taskId = newTaskId();
    await store.createTask({ id: taskId, workspaceId: "ws", title: "", createdAt: FIXTURE_AT });
    const revision = revisionRecord("v1", { id: `${randomBytes(8).toString("hex")}-rev`, taskId });
    await expect(
      store.inTransaction(async (tx) => {
        await tx.tables.heads.insert(headRecord("v1", { taskId }), { revisions: 1, bytes: 2 });
        await tx.tables.revisions.insert(revision);
        await tx.tables.revisions.insert(revision);
      }),
    ).rejects.toBeInstanceOf(StorageConflictError);
    await store.inTransaction((tx) => tx.read(taskId, { reads: "content" })); // the next write on the connection
    expect(await store.getHead(taskId)).toBeNull();
    expect(await store.listRevisions(taskId, null, 10)).toEqual([]);
  });

  it("closes a connection that cannot roll back (killed mid-write); the next write gets a new one, set up as before", async () => {
    const [taskId, next] = [newTaskId(), newTaskId()];
    let killed = -1;
    const failure = await transactions
      .run(async (send) => {
        killed = (await session(send)).id;
        await insertTask(send, taskId);
        await execSql(url, `KILL CONNECTION ${killed}`);
        await insertTask(send, next);
      })
      .catch((error: unknown) => error);
    expect(classifyStorageError(failure)).toBeInstanceOf(StorageUnavailableError);

    const fresh = await transactions.run(async (send) => {
      await insertTask(send, next);
      return session(send);
    });
    expect(fresh).toEqual({
      id: expect.any(Number) as unknown,
      isolation: "READ-COMMITTED",
      lockWait: ROW_LOCK_WAIT_SECONDS,
      inTransaction: 1,
    });
    expect(fresh.id).not.toBe(killed);
    expect(await storedTasks([taskId, next])).toEqual([next]);
  });
});
