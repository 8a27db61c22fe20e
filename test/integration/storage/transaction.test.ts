import { randomBytes } from "node:crypto";
import type { DataSource } from "typeorm";
import { StorageConflictError, StorageUnavailableError } from "../../../src/plans/ports/store-errors";
import { createDataSource } from "../../../src/storage/data-source";
import { runMigrations } from "../../../src/storage/migrations-runner";
import { classifyStorageError } from "../../../src/storage/storage-errors";
import { TypeOrmPlanStore } from "../../../src/storage/typeorm-plan-store";
import { revisionContent } from "../../../src/storage/devices/content-at-head";
import { insertHead } from "../../../src/storage/tables/heads";
import { insertRevision } from "../../../src/storage/tables/revisions";
import {
  FENCE_CHECK,
  type Fence,
  ROW_LOCK_WAIT_SECONDS,
  type UnitOfWork,
  unitOfWork,
  type WriteStatements,
} from "../../../src/storage/transaction";
import { createDatabase } from "../../harness/databases/mariadb";
import { FIXTURE_AT, headRecord, revisionRecord } from "../../harness/fixtures/records";
import { execSql } from "../../harness/databases/sql";
import { type ForgetfulProxy, startForgetfulProxy } from "../../harness/network/forgetful-proxy";
import type { ReplacedReason, Send } from "../../../src/storage/write-connection";
import { createConnection } from "mysql2/promise";

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
      transactions.run(async ({ send }) => {
        failedOn = (await session(send)).id;
        await insertTask(send, failed);
        throw new Error("the work failed");
      }),
    ).rejects.toThrow("the work failed");

    const reused = await transactions.run(async ({ send }) => {
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
      .run(async ({ send }) => {
        await insertTask(send, taskId);
        await insertTask(send, taskId);
      })
      .catch((error: unknown) => error);
    // The driver's own error, which the store classifies as before (a duplicate key is a conflict).
    expect(failure).toMatchObject({ errno: 1062 });
    expect(classifyStorageError(failure)).toBeInstanceOf(StorageConflictError);
    await transactions.run(({ send }) => insertTask(send, next));
    expect(await storedTasks([taskId, next])).toEqual([next]);
  });

  it("refuses a statement sent after the transaction ended (it would run outside it, or in the next write)", async () => {
    const sends: Send[] = [];
    await transactions.run(async ({ send }) => {
      sends.push(send);
    });
    const taskId = newTaskId();
    await expect(
      sends[0]?.(`INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', '', 0)`, [taskId]),
    ).rejects.toThrow("the write transaction has ended");
    expect(await storedTasks([taskId])).toEqual([]);
  });

  // A deferred task row (transaction.ts), fenced or not.
  const deferTask = (statements: WriteStatements, id: string, fence?: Fence) =>
    statements.defer(
      "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', '', ?)",
      [id, FIXTURE_AT.getTime()],
      fence,
    );
  const retitle = (statements: WriteStatements, ids: string[], fence: Fence) =>
    statements.defer(
      `UPDATE tasks SET title = 'retitled' WHERE id IN (${ids.map(() => "?").join(", ")})`,
      [...ids],
      fence,
    );
  const titles = async (ids: string[]) =>
    (
      (await execSql(
        url,
        `SELECT title FROM tasks WHERE id IN (${ids.map(() => "?").join(", ")}) ORDER BY id`,
        [...ids],
      )) as { title: string }[]
    ).map((row) => row.title);

  it("sends deferred statements, in order, before the next statement the work reads, and with its COMMIT", async () => {
    const [first, second, third] = [newTaskId(), newTaskId(), newTaskId()].sort() as [string, string, string];
    const seen = await transactions.run(async (statements) => {
      deferTask(statements, first);
      deferTask(statements, second);
      const { rows } = await statements.send("SELECT COUNT(*) AS n FROM tasks WHERE id IN (?, ?)", [
        first,
        second,
      ]);
      deferTask(statements, third);
      retitle(statements, [third], { lost: "third task's title" });
      return Number((rows[0] as { n: number | string }).n);
    });
    expect(seen).toBe(2);
    expect(await storedTasks([first, second, third])).toEqual([first, second, third]);
    expect(await titles([third])).toEqual(["retitled"]);
  });

  it("refuses the whole write when a fenced statement changes no row or two: nothing before or after it is committed", async () => {
    const [a, b, after] = [newTaskId(), newTaskId(), newTaskId()];
    const checked: string[] = [];
    const fence = (name: string): Fence => ({
      lost: `${name} fence lost`,
      check: async (send) => {
        // The check runs in the transaction: it sees the rows the write deferred before the fence.
        const { rows } = await send("SELECT COUNT(*) AS n FROM tasks WHERE id IN (?, ?)", [a, b]);
        checked.push(`${name}:${Number((rows[0] as { n: number | string }).n)}`);
      },
    });
    const none = await transactions
      .run(async (statements) => {
        deferTask(statements, a);
        retitle(statements, [newTaskId()], fence("none"));
        deferTask(statements, after);
      })
      .catch((error: unknown) => error);
    expect(none).toBeInstanceOf(StorageConflictError);
    expect((none as Error).message).toBe("none fence lost");
    const two = await transactions
      .run(async (statements) => {
        deferTask(statements, a);
        deferTask(statements, b);
        retitle(statements, [a, b], fence("two"));
        deferTask(statements, after);
      })
      .catch((error: unknown) => error);
    expect(two).toBeInstanceOf(StorageConflictError);
    expect(checked).toEqual(["none:1", "two:2"]);
    expect(await storedTasks([a, b, after])).toEqual([]);
    // The connection was rolled back and serves the next write.
    const next = newTaskId();
    expect(
      await transactions.run(async ({ send }) => (await insertTask(send, next), session(send))),
    ).toMatchObject({
      inTransaction: 1,
    });
    expect(await storedTasks([next])).toEqual([next]);
  });

  it("raises its fence check (errno 1242) exactly when the statement before it changed no row or two, stopping the query before its COMMIT", async () => {
    const [a, b, after] = [newTaskId(), newTaskId(), newTaskId()];
    await transactions.run(async ({ send }) => (await insertTask(send, a), insertTask(send, b)));
    const connection = await createConnection({ uri: url, multipleStatements: true });
    const outcomes: string[] = [];
    try {
      for (const [changed, ids] of [
        [0, [newTaskId()]],
        [1, [a]],
        [2, [a, b]],
      ] as const) {
        // Each case in one query, as BatchedStatements sends it: fenced UPDATE, check, a row, COMMIT.
        const sql = [
          "START TRANSACTION",
          `UPDATE tasks SET title = 'fenced' WHERE id IN (${ids.map(() => "?").join(", ")})`,
          FENCE_CHECK,
          "INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', '', 0)",
          "COMMIT",
        ].join(";\n");
        const errno = await connection
          .query(sql, [...ids, after])
          .then(() => "ok")
          .catch((error: { errno?: number }) => `errno ${error.errno}`);
        const [[open]] = (await connection.query("SELECT @@in_transaction AS open")) as unknown as [
          { open: number }[],
        ];
        await connection.query("ROLLBACK");
        outcomes.push(`${changed}: ${errno}, open ${open?.open}`);
        if (errno === "ok") await execSql(url, "DELETE FROM tasks WHERE id = ?", [after]);
      }
    } finally {
      await connection.end();
    }
    // One row changed: the check finds no row and the query commits; otherwise nothing after it ran.
    expect(outcomes).toEqual(["0: errno 1242, open 1", "1: ok, open 0", "2: errno 1242, open 1"]);
    expect(await storedTasks([after])).toEqual([]);
    // Only the one-row case committed its UPDATE.
    expect([await titles([a]), await titles([b])]).toEqual([["fenced"], [""]]);
  });

  it("refuses a query of two fences, one of them lost, naming both and running both checks (the database does not say which)", async () => {
    const [kept, after] = [newTaskId(), newTaskId()];
    const checked: string[] = [];
    const fence = (name: string): Fence => ({
      lost: `${name} lost`,
      check: async () => void checked.push(name),
    });
    const failure = await transactions
      .run(async (statements) => {
        deferTask(statements, kept);
        retitle(statements, [kept], fence("first"));
        retitle(statements, [newTaskId()], fence("second"));
        deferTask(statements, after);
      })
      .catch((error: unknown) => error);
    expect(failure).toEqual(new StorageConflictError("first lost; second lost"));
    expect(checked).toEqual(["first", "second"]);
    expect(await storedTasks([kept, after])).toEqual([]);
  });

  it("refuses with the fence check's own error when it throws one, and rolls back", async () => {
    const taskId = newTaskId();
    const failure = await transactions
      .run(async (statements) => {
        deferTask(statements, taskId);
        retitle(statements, [newTaskId()], {
          lost: "never said",
          check: () => Promise.reject(new Error("the checked text is damaged")),
        });
      })
      .catch((error: unknown) => error);
    expect(failure).toEqual(new Error("the checked text is damaged"));
    expect(await storedTasks([taskId])).toEqual([]);
  });

  it("never sends what a failed work deferred, and refuses a deferral once the transaction ended", async () => {
    const [dropped, late] = [newTaskId(), newTaskId()];
    const ended: WriteStatements[] = [];
    await expect(
      transactions.run(async (statements) => {
        ended.push(statements);
        deferTask(statements, dropped);
        throw new Error("the work failed");
      }),
    ).rejects.toThrow("the work failed");
    const [statements] = ended;
    if (!statements) throw new Error("no transaction ran");
    expect(() => deferTask(statements, late)).toThrow("the write transaction has ended");
    await transactions.run(async ({ send }) => session(send)); // the next write on the connection
    expect(await storedTasks([dropped, late])).toEqual([]);
  });

  it("rolls back a store write whose later step fails: no HEAD, no revision", async () => {
    const taskId = newTaskId();
    await store.createTask({ id: taskId, workspaceId: "ws", title: "", createdAt: FIXTURE_AT });
    const revision = revisionRecord("v1", { id: `${randomBytes(8).toString("hex")}-rev`, taskId });
    await expect(
      store.inTransaction(async (tx) => {
        insertHead(tx.statements, headRecord("v1", { taskId }), { revisions: 1, bytes: 2 });
        insertRevision(tx.statements, revision, revisionContent(revision, false));
        insertRevision(tx.statements, revision, revisionContent(revision, false));
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
      .run(async ({ send }) => {
        killed = (await session(send)).id;
        await insertTask(send, taskId);
        await execSql(url, `KILL CONNECTION ${killed}`);
        await insertTask(send, next);
      })
      .catch((error: unknown) => error);
    expect(classifyStorageError(failure)).toBeInstanceOf(StorageUnavailableError);

    const fresh = await transactions.run(async ({ send }) => {
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

// A write's holder that stops acting (frozen, or its host gone) must not keep its task's rows: the
// database ends its session once it has sent nothing for the lease (transaction.ts sessionBounds).
describe("a write transaction whose holder stops acting, and connections closed while idle", () => {
  const HOLD_SECONDS = 1;
  let url: string;
  let proxy: ForgetfulProxy;
  let dataSource: DataSource;
  let transactions: UnitOfWork;
  const replaced: ReplacedReason[] = [];

  beforeAll(async () => {
    const database = `h_${randomBytes(6).toString("hex")}`;
    const port = Number(process.env.TEST_MARIADB_PORT);
    await createDatabase(port, database);
    url = `mysql://root@127.0.0.1:${port}/${database}`;
    proxy = await startForgetfulProxy(port);
    dataSource = createDataSource(`mysql://root@127.0.0.1:${proxy.port}/${database}`, { poolSize: 1 });
    await dataSource.initialize();
    await runMigrations(dataSource, { lockWaitMs: 10_000 });
    transactions = unitOfWork(dataSource, "mysql", {
      holdSeconds: HOLD_SECONDS,
      onReplaced: (reason) => replaced.push(reason),
    });
  });
  afterAll(async () => {
    await dataSource.destroy();
    await proxy.close();
  });

  const newTaskId = () => `hold-${randomBytes(6).toString("hex")}`;
  const titleOf = async (id: string) =>
    ((await execSql(url, "SELECT title FROM tasks WHERE id = ?", [id])) as { title: string }[])[0]?.title;
  const insertTask = (send: Send, id: string) =>
    send("INSERT INTO tasks (id, workspace_id, title, created_at) VALUES (?, 'ws', 'first', ?)", [
      id,
      FIXTURE_AT.getTime(),
    ]);

  it("ends the transaction of a holder silent for the bound: a waiter locks its rows while the holder still waits, and nothing the holder wrote commits", async () => {
    const taskId = newTaskId();
    await transactions.run(({ send }) => insertTask(send, taskId));
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    let wake!: () => void;
    const silent = new Promise<void>((resolve) => (wake = resolve));
    const holder = transactions
      .run(async ({ send }) => {
        await send("SELECT id FROM tasks WHERE id = ? FOR UPDATE", [taskId]);
        await send("UPDATE tasks SET title = 'holder' WHERE id = ?", [taskId]);
        locked();
        await silent; // the holder stops acting, its transaction open
        await send("UPDATE tasks SET title = 'late' WHERE id = ?", [taskId]);
      })
      .catch((error: unknown) => error);
    await holding;

    // Another writer, on a connection of its own, waits for the row (up to 20 s, as a lease holder would).
    const waiter = await createConnection({ uri: url });
    const startedAt = Date.now();
    try {
      await waiter.query("SET SESSION innodb_lock_wait_timeout = 20");
      await waiter.query("SELECT id FROM tasks WHERE id = ? FOR UPDATE", [taskId]);
    } finally {
      await waiter.end();
      wake(); // only now does the holder go on
    }
    console.log(
      `[hold bound] a waiter locked a silent holder's row after ${Date.now() - startedAt} ms (bound ${HOLD_SECONDS} s)`,
    );
    expect(classifyStorageError(await holder)).toBeInstanceOf(StorageUnavailableError);
    expect(await titleOf(taskId)).toBe("first");
  });

  it("restores the server's own bounds on the connection it gives back, after a commit and after a rollback", async () => {
    const session = async () =>
      (await dataSource.query(
        "SELECT @@SESSION.wait_timeout = @@GLOBAL.wait_timeout AS waitRestored," +
          " @@SESSION.net_read_timeout = @@GLOBAL.net_read_timeout AS readRestored",
      )) as { waitRestored: number; readRestored: number }[];
    const bounds = await transactions.run(async ({ send }) => {
      await insertTask(send, newTaskId());
      return (await send("SELECT @@SESSION.wait_timeout AS wait, @@SESSION.net_read_timeout AS netRead", []))
        .rows[0];
    });
    expect(bounds).toEqual({ wait: HOLD_SECONDS, netRead: HOLD_SECONDS });
    expect(await session()).toEqual([{ waitRestored: 1, readRestored: 1 }]);
    await expect(
      transactions.run(async ({ send }) => {
        await insertTask(send, newTaskId());
        throw new Error("the work failed");
      }),
    ).rejects.toThrow("the work failed");
    expect(await session()).toEqual([{ waitRestored: 1, readRestored: 1 }]);
  });

  it("never hands a write a connection the network forgot while it was idle: the write goes through on a new one, counted", async () => {
    const taskId = newTaskId();
    await transactions.run(({ send }) => insertTask(send, taskId));
    const before = { opened: proxy.opened(), replaced: replaced.length };
    await proxy.forget(); // the pooled connection's session ends; the pool hears nothing
    await transactions.run(({ send }) => send("UPDATE tasks SET title = 'after' WHERE id = ?", [taskId]));
    expect(await titleOf(taskId)).toBe("after");
    expect(proxy.opened()).toBe(before.opened + 1);
    expect(replaced.slice(before.replaced)).toEqual(["lost"]);
  });
});
