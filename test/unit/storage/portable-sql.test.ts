import type { DataSource, QueryRunner } from "typeorm";
import type { PlanCommit, RevisionMeta } from "../../../src/plans/ports/records";
import { countHistory } from "../../../src/storage/devices/history-usage";
import { SqlLockedWrite, SqlWriteTx } from "../../../src/storage/locked-task";
import { type Dialect, sqlDialect } from "../../../src/storage/sql-dialect";
import { verifyStoredContent } from "../../../src/storage/tables/heads";
import { revisionWithContent } from "../../../src/storage/tables/revisions";
import { findRequest } from "../../../src/storage/tables/write-requests";
import { runnerWork, unitOfWork } from "../../../src/storage/transaction";
import type { PooledConnection } from "../../../src/storage/write-connection";
import { FIXTURE_AT, headRecord, revisionRecord } from "../../harness/fixtures/records";

/**
 * What the write path must never send, on either dialect: the SQL runs on MySQL 8.0/8.4, MariaDB
 * 10.11+, TiDB and Vitess (single-shard transactions keyed by task id), issue 42 item 8.
 * - `SELECT ... INTO @var`: TiDB has no SELECT INTO a variable (pingcap/tidb#23924), Vitess none
 *   either (vitessio/vitess#2856).
 * - user variables (`@name`) at all: Vitess keeps them in vtgate's session and substitutes them as
 *   bind variables, TiDB has had them wrong across a multi-statement query (pingcap/tidb#19204); a
 *   write's state belongs in its statements. System variables (`@@name`) are not user variables.
 * - advisory locks (GET_LOCK and its kin): the database's row locks are the fence (DESIGN.md);
 *   Vitess serves them on a reserved connection of one shard, TiDB only since 5.3 and as a
 *   compatibility device.
 * - SIGNAL/RESIGNAL, CALL and stored programs: TiDB has no stored procedures, Vitess does not route them.
 * - LOCK TABLES: TiDB ignores it unless a setting is on, Vitess refuses it.
 * - LOCK IN SHARE MODE / FOR SHARE, SKIP LOCKED: TiDB has no shared row locks nor SKIP LOCKED.
 * - SQL_CALC_FOUND_ROWS / FOUND_ROWS(): deprecated since MySQL 8.0.17, unsupported by Vitess
 *   (vitessio/vitess#3904).
 * ON DUPLICATE KEY UPDATE is not denied: all four accept it on a single shard.
 */
const DENIED: readonly (readonly [string, RegExp])[] = [
  ["SELECT ... INTO a variable", /\bINTO\s+@/i],
  ["a user variable", /(^|[^@\w`])@(?!@)[\w`'"$.]/],
  ["an advisory lock", /\b(GET_LOCK|RELEASE_LOCK|RELEASE_ALL_LOCKS|IS_FREE_LOCK|IS_USED_LOCK)\s*\(/i],
  ["SIGNAL", /\b(RE)?SIGNAL\s+SQLSTATE\b/i],
  [
    "a stored procedure",
    /(^|;)\s*CALL\s|\bCREATE\s+(DEFINER\s*=\s*\S+\s+)?(PROCEDURE|FUNCTION|TRIGGER|EVENT)\b/i,
  ],
  ["LOCK TABLES", /\b(UN)?LOCK\s+TABLES?\b/i],
  ["a shared or skipping row lock", /\bLOCK\s+IN\s+SHARE\s+MODE\b|\bFOR\s+SHARE\b|\bSKIP\s+LOCKED\b/i],
  ["FOUND_ROWS", /\bSQL_CALC_FOUND_ROWS\b|\bFOUND_ROWS\s*\(/i],
];

/** The constructs of DENIED that `sql` uses (string literals and comments aside). */
function deniedIn(sql: string): string[] {
  const code = sql
    .replace(/'(?:[^'\\]|\\.|'')*'/g, "''")
    .replace(/"(?:[^"\\]|\\.|"")*"/g, '""')
    .replace(/\/\*[\s\S]*?\*\/|--[^\n]*|#[^\n]*/g, " ");
  return DENIED.filter(([, pattern]) => pattern.test(code)).map(([name]) => name);
}

const at = FIXTURE_AT;
const taskId = "portable-task";
const revision = (number: number, overrides: Partial<RevisionMeta> = {}): RevisionMeta => {
  const { content: _content, ...meta } = revisionRecord("v", { id: `r${number}`, taskId, number });
  return { ...meta, ...overrides };
};
const change = (version: number, kind: "created" | "updated" | "reverted" | "deleted") => ({
  taskId,
  version,
  step: 0 as const,
  kind,
  plan: { ...headRecord("", { taskId, version, deleted: kind === "deleted" }), content: undefined } as never,
  revision: kind === "deleted" ? null : { id: `r${version}`, number: version, coalesced: false },
  author: { kind: "agent" as const, name: "ci" },
  committedAt: at,
});
// An allowance every write exceeds: the change history yields (trim, recount) on each content write.
const allowance = { revisions: 0, bytes: 0, trimToBytes: 0 };

// The writes a task goes through: create, append, replace (coalesced), revert, delete, mark, delete task.
const COMMITS: readonly PlanCommit[] = [
  {
    kind: "content",
    created: false,
    head: headRecord("v1", { taskId }),
    fenceVersion: null,
    revision: revision(1),
    coalesces: null,
    allowance,
    change: change(1, "created"),
  },
  {
    kind: "content",
    created: false,
    head: {
      ...headRecord("v1\n\nmore", { taskId, version: 2, latestRevisionNumber: 2 }),
      content: { keepChars: 2, keepBytes: 2, suffix: "\n\nmore" },
      trimmedChars: 8,
      trimmedBytes: 8,
    },
    fenceVersion: 1,
    revision: revision(2),
    coalesces: null,
    allowance,
    change: change(2, "updated"),
  },
  {
    kind: "content",
    created: false,
    head: headRecord("replaced", { taskId, version: 3, latestRevisionNumber: 2 }),
    fenceVersion: 2,
    revision: revision(2, { rowVersion: 2 }),
    coalesces: { rowVersion: 1, contentBytes: 8 },
    allowance,
    change: change(3, "updated"),
  },
  {
    kind: "content",
    created: false,
    head: headRecord("v1", { taskId, version: 4, latestRevisionNumber: 3 }),
    fenceVersion: 3,
    revision: revision(3, { revertOfRevisionId: "r1" }),
    coalesces: null,
    allowance,
    change: change(4, "reverted"),
  },
  {
    kind: "delete",
    head: headRecord("", { taskId, version: 5, latestRevisionNumber: 3, deleted: true }),
    fenceVersion: 4,
    change: change(5, "deleted"),
  },
  {
    kind: "mark",
    head: headRecord("v1", { taskId, version: 4, latestRevisionNumber: 3, implementationStartedAt: at }),
    fenceVersion: 4,
    change: { ...change(4, "updated"), step: 1, kind: "implementation-started", revision: null },
  },
  { kind: "delete-task", taskId, plan: null },
];

// Every statement the write path composes, in one transaction: the locking read and what it reads
// besides, each commit above (with a remembered request), and the stored size's check.
async function writeEverything(tx: SqlWriteTx, dialect: Dialect): Promise<void> {
  const sql = sqlDialect(dialect);
  const { statements } = tx;
  await tx.read(taskId, { reads: "content", requestId: "req", revisionId: "r1" });
  await tx.read(taskId, { reads: "metadata" });
  await countHistory(statements, sql, taskId);
  await findRequest(statements.send, taskId, "req");
  await revisionWithContent(
    async (query, parameters) => (await statements.send(query, parameters)).rows,
    taskId,
    "r1",
  );
  await verifyStoredContent(statements.send, sql, taskId);
  const prior = { ...headRecord("v1", { taskId }), trimmedChars: 2, trimmedBytes: 2 };
  const state = {
    task: { id: taskId, workspaceId: "ws", title: "", createdAt: at },
    head: prior,
    latest: null,
    history: { revisions: 1, bytes: 2 },
    target: null,
    remembered: null,
  };
  const request = { taskId, requestId: "req", fingerprint: "f", result: {}, createdAt: at };
  for (const commit of COMMITS)
    await new SqlLockedWrite(statements, sql, true, state as never).commit(commit, {
      request,
      forgetBefore: at,
    });
}

// A statement's answer: no rows for a read, one row changed otherwise.
const answer = (sql: string) => (/^\s*SELECT\b/i.test(sql) ? [] : { affectedRows: 1 });

/** Everything a MySQL write sends on its pooled connection; `lost`: each fence check fails (1242). */
async function sentOnMysql(lost: boolean): Promise<string[]> {
  const sent: string[] = [];
  const connection: PooledConnection = {
    query(sql, _values, callback) {
      sent.push(sql);
      const statements = sql.split(";\n");
      if (lost && statements.some((s) => /ROW_COUNT\(\)/i.test(s)))
        return void setImmediate(() =>
          callback(Object.assign(new Error("fence"), { errno: 1242 }), undefined),
        );
      const results = statements.map(answer);
      setImmediate(() => callback(null, statements.length === 1 ? results[0] : results));
    },
    release: () => undefined,
    destroy: () => undefined,
  };
  const dataSource = { driver: { obtainMasterConnection: () => Promise.resolve(connection) } };
  await unitOfWork(dataSource as unknown as DataSource, "mysql")
    .run((statements) => writeEverything(new SqlWriteTx(statements, "mysql", true), "mysql"))
    .catch((error: unknown) => {
      if (!lost) throw error;
    });
  return sent;
}

/** Everything a SQLite write sends through its query runner (TypeORM sends BEGIN and COMMIT). */
async function sentOnSqlite(): Promise<string[]> {
  const sent: string[] = [];
  const runner = {
    query: (sql: string) => {
      sent.push(sql);
      const rows = answer(sql);
      return Promise.resolve(Array.isArray(rows) ? { records: rows } : { records: [], affected: 1 });
    },
  };
  await runnerWork(runner as unknown as QueryRunner, "sqlite" as Dialect, (statements) =>
    writeEverything(new SqlWriteTx(statements, "sqlite", true), "sqlite"),
  );
  return sent;
}

describe("the SQL the write path sends runs on MySQL, MariaDB, TiDB and Vitess alike", () => {
  it.each([
    ["MySQL, every fence kept", () => sentOnMysql(false)],
    ["MySQL, every fence lost (checks and rollback)", () => sentOnMysql(true)],
    ["SQLite", sentOnSqlite],
  ])("uses no denied construct: %s", async (_label, sent) => {
    const statements = await sent();
    expect(statements.length).toBeGreaterThan(10);
    const found = statements.flatMap((sql) => deniedIn(sql).map((name) => `${name}: ${sql}`));
    expect(found).toEqual([]);
  });

  it("reaches every kind of statement: the fence check, the locking read, the commit and the rollback", async () => {
    const [kept, lost] = [(await sentOnMysql(false)).join("\n"), (await sentOnMysql(true)).join("\n")];
    expect(kept).toMatch(/ROW_COUNT\(\)/);
    expect(kept).toMatch(/FOR UPDATE/);
    expect(kept).toMatch(/COMMIT/);
    expect(kept).toMatch(/DELETE FROM tasks/);
    expect(lost).toMatch(/ROLLBACK/);
  });

  it.each([
    [
      "SELECT fence.lost INTO @taskplans_fence FROM (SELECT 1 AS lost) fence",
      ["SELECT ... INTO a variable", "a user variable"],
    ],
    ["SET @x = 1", ["a user variable"]],
    ["SELECT GET_LOCK('t', 5)", ["an advisory lock"]],
    ["SIGNAL SQLSTATE '45000'", ["SIGNAL"]],
    ["CALL fence()", ["a stored procedure"]],
    ["LOCK TABLES tasks WRITE", ["LOCK TABLES"]],
    ["SELECT id FROM tasks FOR SHARE", ["a shared or skipping row lock"]],
    ["SELECT SQL_CALC_FOUND_ROWS id FROM tasks", ["FOUND_ROWS"]],
    ["SET SESSION wait_timeout = @@GLOBAL.wait_timeout", []],
    ["INSERT INTO t (a) VALUES ('me@example.com, INTO @x')", []],
  ])("names what %s uses", (sql, names) => {
    expect(deniedIn(sql)).toEqual(names);
  });
});
