import type { DataSource, EntityManager, QueryRunner } from "typeorm";
import type { Dialect } from "./data-source";
import { PlanEntity } from "./entities/plan.entity";
import { RevisionEntity } from "./entities/revision.entity";
import { TaskEntity } from "./entities/task.entity";
import { WriteRequestEntity } from "./entities/write-request.entity";
import type { PlanStore, PlanWriteTx } from "../plans/ports/plan-store";
import {
  CHANGE_COLUMNS,
  changeFromRow,
  changeParameters,
  type ChangeRow,
  PREFIX_COLUMNS,
  prefixFromRow,
  prefixParameters,
  resolvePrefixes,
} from "./change-rows";
import type {
  ChangeContent,
  ChangeKey,
  ChangeRecord,
  HeadRecord,
  HeadWrite,
  LockedState,
  RevisionMeta,
  RevisionRecord,
  StoredChange,
  TaskRecord,
  WriteRequestRecord,
} from "../plans/ports/records";
import { sendStatement, type StatementResult } from "./hot-statement";
import { lockedStateFromRow, type LockedRow } from "./locked-state";
import {
  headFromEntity,
  verifySize,
  headToEntity,
  revisionFromEntity,
  revisionMetaFromEntity,
  taskFromEntity,
  taskToEntity,
} from "./record-mapping";
import { noQueue, SerialQueue } from "./serial-queue";
import { classifyStorageError } from "./storage-errors";
import { StorageConflictError } from "../plans/ports/store-errors";
import { REVISION_CONTENT, type SqlDialect, sqlDialect } from "./sql-dialect";

const REVISION_META_COLUMNS = [
  "r.id",
  "r.taskId",
  "r.revisionNumber",
  "r.title",
  "r.contentBytes",
  "r.contentChars",
  "r.authorKind",
  "r.authorName",
  "r.revertOfRevisionId",
  "r.createdAt",
  "r.updatedAt",
  "r.rowVersion",
];

const ROW_LOCK_WAIT_SECONDS = 5;

type Query = (sql: string, parameters: unknown[]) => Promise<unknown>;

// Change rows after a key (bound as afterKey gives it).
const AFTER_KEY = "(version > ? OR (version = ? AND step > ?))";
const afterKey = (key: ChangeKey) => [key.version, key.version, key.step];

// The HEAD content this transaction wrote, copied by the database into a revision or change row, so
// that the plan crosses the wire at most once per write (never, for an append). Bound to the task id.
const HEAD_CONTENT = "(SELECT h.content FROM task_plans h WHERE h.task_id = ?)";
// Its recorded size (what a copy of it adds to the task's stored history).
const HEAD_CONTENT_BYTES = "(SELECT h.content_bytes FROM task_plans h WHERE h.task_id = ?)";

/** PlanStore over TypeORM, for SQLite (embedded default) and MySQL/MariaDB (production). */
export class TypeOrmPlanStore implements PlanStore {
  private readonly queue: { run<T>(job: () => Promise<T>): Promise<T> };
  private readonly sql: SqlDialect;

  private readonly contentAtHead: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly dialect: Dialect,
    options: { readonly revisionContentAtHead?: boolean } = {},
  ) {
    this.queue = dialect === "sqlite" ? new SerialQueue() : noQueue;
    this.sql = sqlDialect(dialect);
    this.contentAtHead = options.revisionContentAtHead ?? false;
  }

  getTask(taskId: string): Promise<TaskRecord | null> {
    return this.guard(async () => {
      const row = await this.dataSource.getRepository(TaskEntity).findOneBy({ id: taskId });
      return row ? taskFromEntity(row) : null;
    });
  }

  createTask(task: TaskRecord): Promise<void> {
    return this.guard(async () => {
      await this.dataSource.getRepository(TaskEntity).insert(taskToEntity(task));
    });
  }

  getPlan(taskId: string): Promise<HeadRecord | null> {
    return this.guard(async () => {
      const row = await this.dataSource.getRepository(PlanEntity).findOneBy({ taskId });
      return row && !row.deleted ? headFromEntity(row) : null;
    });
  }

  listRevisions(taskId: string, beforeNumber: number | null, limit: number): Promise<RevisionMeta[]> {
    return this.guard(async () => {
      const query = this.dataSource
        .getRepository(RevisionEntity)
        .createQueryBuilder("r")
        .select(REVISION_META_COLUMNS)
        .where("r.taskId = :taskId", { taskId })
        .orderBy("r.revisionNumber", "DESC")
        .limit(limit);
      if (beforeNumber !== null) query.andWhere("r.revisionNumber < :beforeNumber", { beforeNumber });
      return (await query.getMany()).map(revisionMetaFromEntity);
    });
  }

  getRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null> {
    return this.guard(async () => {
      return revisionWithContent(
        (sql, parameters) => this.dataSource.query(sql, parameters),
        taskId,
        revisionId,
      );
    });
  }

  getHead(taskId: string): Promise<HeadRecord | null> {
    return this.guard(async () => {
      const row = await this.dataSource.getRepository(PlanEntity).findOneBy({ taskId });
      return row ? headFromEntity(row) : null;
    });
  }

  markImplementationStarted(
    taskId: string,
    mark: { at: Date; by: string; sessionId: string },
    change: (marked: HeadRecord) => ChangeRecord,
  ): Promise<{ head: HeadRecord; marked: boolean } | null> {
    return this.guard(() =>
      this.dataSource.transaction(async (manager) => {
        const result = await manager
          .createQueryBuilder()
          .update(PlanEntity)
          .set({
            implementationStartedAt: mark.at.getTime(),
            implementationStartedBy: mark.by,
            implementationStartedSessionId: mark.sessionId,
            updatedAt: mark.at.getTime(),
          })
          .where("task_id = :taskId AND deleted = 0 AND implementation_started_at IS NULL", { taskId })
          .execute();
        const row = await manager.findOneBy(PlanEntity, { taskId });
        if (!row || row.deleted) return null;
        const head = headFromEntity(row);
        const marked = result.affected === 1;
        if (marked) await this.writeTx(manager).recordChange(change(head), { form: "head" });
        return { head, marked };
      }),
    );
  }

  readChanges(
    taskId: string,
    after: ChangeKey,
    limit: number,
    withContent: boolean,
  ): Promise<StoredChange[]> {
    const page = (query: Query) =>
      query(
        `SELECT ${withContent ? `${CHANGE_COLUMNS}, ${PREFIX_COLUMNS}` : CHANGE_COLUMNS.replace(", content", ", NULL AS content")}` +
          ` FROM task_plan_changes WHERE task_id = ? AND ${AFTER_KEY} ORDER BY version, step LIMIT ?`,
        [taskId, ...afterKey(after), limit],
      ) as Promise<ChangeRow[]>;
    return this.guard(async () => {
      if (!withContent) return (await page(this.query)).map(changeFromRow);
      // An append's row holds its content as a prefix of the next one's: the page and what it is
      // derived from (the next copy, or HEAD) are read in one snapshot.
      return this.consistentRead(async (query) => {
        const rows = (await page(query)).map((row) => ({
          change: changeFromRow(row),
          prefix: prefixFromRow(row),
        }));
        const last = rows.at(-1);
        const next =
          last?.prefix && last.change.content === null ? await this.contentAfter(query, last.change) : null;
        return resolvePrefixes(rows, next);
      });
    });
  }

  // The content of the change after `last` (a prefix row), if it may be derived from: the next row
  // not waiting for a copy, or else HEAD; with every version in between still recorded.
  private async contentAfter(query: Query, last: ChangeRecord): Promise<string | null> {
    const { taskId } = last;
    const [row] = (await query(
      `SELECT version, step, content, ${PREFIX_COLUMNS} FROM task_plan_changes WHERE task_id = ? AND ${AFTER_KEY}` +
        " AND (content IS NOT NULL OR content_kept_chars IS NULL) ORDER BY version, step LIMIT 1",
      [taskId, ...afterKey(last)],
    )) as ChangeRow[];
    let anchor: { version: number; content: string | null };
    if (row) {
      const key = { version: Number(row.version), step: Number(row.step) };
      if (key.step !== 1 && prefixFromRow(row) === null) return null;
      anchor = { version: key.version, content: row.content === null ? null : String(row.content) };
    } else {
      const [head] = (await query("SELECT version, content, deleted FROM task_plans WHERE task_id = ?", [
        taskId,
      ])) as ChangeRow[];
      if (!head || Number(head.deleted) !== 0) return null;
      anchor = { version: Number(head.version), content: String(head.content) };
    }
    const [between] = (await query(
      "SELECT COUNT(DISTINCT version) AS n FROM task_plan_changes WHERE task_id = ? AND version > ? AND version <= ?",
      [taskId, last.version, anchor.version],
    )) as ChangeRow[];
    return Number(between?.n) === anchor.version - last.version ? anchor.content : null;
  }

  // Reads that must see one state: a REPEATABLE READ snapshot on MySQL; on SQLite the store already
  // runs one job at a time.
  private consistentRead<T>(work: (query: Query) => Promise<T>): Promise<T> {
    if (this.dialect === "sqlite") return work(this.query);
    return this.dataSource.transaction("REPEATABLE READ", (manager) =>
      work((sql, parameters) => manager.query(sql, parameters)),
    );
  }

  private readonly query: Query = (sql, parameters) => this.dataSource.query(sql, parameters);

  oldestChangeVersion(taskId: string): Promise<number | null> {
    return this.guard(async () => {
      const rows = (await this.dataSource.query(
        "SELECT MIN(version) AS oldest FROM task_plan_changes WHERE task_id = ?",
        [taskId],
      )) as { oldest: number | string | null }[];
      const oldest = rows[0]?.oldest;
      return oldest === null || oldest === undefined ? null : Number(oldest);
    });
  }

  watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>> {
    return this.guard(async () => {
      const states = new Map<string, ChangeKey | null>();
      for (let i = 0; i < taskIds.length; i += 500) {
        const slice = taskIds.slice(i, i + 500);
        // version * 2 + step orders keys as compareChangeKeys does. Each task's newest key is the
        // last entry of its primary key range (task_id, version, step): one index probe per task,
        // whatever its retained history (a MAX over an expression would read all of it).
        const rows = (await this.dataSource.query(
          "SELECT t.id AS task_id, (SELECT c.version * 2 + c.step FROM task_plan_changes c" +
            " WHERE c.task_id = t.id ORDER BY c.version DESC, c.step DESC LIMIT 1) AS newest FROM tasks t" +
            ` WHERE t.id IN (${slice.map(() => "?").join(", ")})`,
          slice,
        )) as { task_id: string; newest: number | string | null }[];
        for (const row of rows) {
          const newest = row.newest === null ? null : Number(row.newest);
          states.set(
            row.task_id,
            newest === null ? null : { version: Math.floor(newest / 2), step: newest % 2 === 1 ? 1 : 0 },
          );
        }
      }
      return states;
    });
  }

  pruneChangesBefore(olderThan: Date, limit: number): Promise<number> {
    return this.guard(() => this.changedRows(this.sql.deleteChangesBefore, [olderThan.getTime(), limit]));
  }

  pruneTaskChanges(taskId: string, keepVersions: number, limit: number): Promise<number> {
    return this.guard(async () => {
      const [row] = (await this.query(
        "SELECT MAX(version) AS newest FROM task_plan_changes WHERE task_id = ?",
        [taskId],
      )) as { newest: number | string | null }[];
      if (row?.newest === null || row?.newest === undefined) return 0;
      return this.changedRows(this.sql.deleteTaskChangesUpTo, [
        taskId,
        Number(row.newest) - keepVersions,
        limit,
      ]);
    });
  }

  // The rows a statement changed, as the driver counts them (TypeORM's structured result: mysql2's
  // affectedRows, better-sqlite3's changes; its plain result for a DELETE is lastInsertRowid there).
  private async changedRows(sql: string, parameters: unknown[]): Promise<number> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = (await runner.query(sql, parameters, true)) as { affected?: number | null };
      return result.affected ?? 0;
    } finally {
      await runner.release();
    }
  }

  inTransaction<T>(work: (tx: PlanWriteTx) => Promise<T>): Promise<T> {
    return this.guard(async () => {
      if (this.dialect === "sqlite")
        return this.dataSource.transaction((manager) => work(this.writeTx(manager)));
      const runner = this.dataSource.createQueryRunner();
      try {
        await runner.connect();
        await this.prepareConnection(runner);
        // Plain START TRANSACTION: the isolation level is already set on the session, which saves a
        // round trip inside every serialized write.
        await runner.startTransaction();
        try {
          const result = await work(this.writeTx(runner.manager));
          await runner.commitTransaction();
          return result;
        } catch (error) {
          if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
          throw error;
        }
      } finally {
        await runner.release();
      }
    });
  }

  private writeTx(manager: EntityManager): TypeOrmWriteTx {
    return new TypeOrmWriteTx(manager, this.dialect, this.contentAtHead);
  }

  // Once per pooled connection: READ COMMITTED (every statement sees the latest commit; the locking
  // reads do the ordering, and no gap locks couple different tasks), and a writer stuck behind a row
  // lock (its holder paused or partitioned) gives up after a few seconds with ABORTED instead of
  // InnoDB's default 50 s.
  private readonly preparedConnections = new WeakSet<object>();
  private async prepareConnection(runner: QueryRunner): Promise<void> {
    const connection = (runner as { databaseConnection?: object }).databaseConnection;
    if (!connection || this.preparedConnections.has(connection)) return;
    await runner.query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    await runner.query(`SET SESSION innodb_lock_wait_timeout = ${ROW_LOCK_WAIT_SECONDS}`);
    this.preparedConnections.add(connection);
  }

  ping(): Promise<void> {
    return this.guard(async () => {
      await this.dataSource.query("SELECT 1");
    });
  }

  async close(): Promise<void> {
    await this.queue.run(async () => {
      if (this.dataSource.isInitialized) await this.dataSource.destroy();
    });
  }

  private guard<T>(job: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      try {
        return await job();
      } catch (error) {
        throw classifyStorageError(error);
      }
    });
  }
}

/** One write transaction. On MySQL its first read locks the task, HEAD and newest revision rows. */
class TypeOrmWriteTx implements PlanWriteTx {
  private readonly sql: SqlDialect;

  constructor(
    private readonly manager: EntityManager,
    private readonly dialect: Dialect,
    private readonly contentAtHead: boolean,
  ) {
    this.sql = sqlDialect(dialect);
  }

  async lockForWrite(taskId: string, options: { content: boolean }): Promise<LockedState | null> {
    const { rows } = await this.send(this.sql.lockForWrite(options.content), [taskId]);
    const row = rows[0] as LockedRow | undefined;
    if (!row) return null;
    // A HEAD written before the trimmed lengths were recorded brings its content (read under the lock
    // just taken) for the append to compose here and record them.
    if (!options.content && row.p_task_id !== null && row.p_trimmed_chars === null) {
      const [head] = (await this.manager.query("SELECT content FROM task_plans WHERE task_id = ?", [
        taskId,
      ])) as { content: string }[];
      row.p_content = head?.content ?? null;
    }
    return lockedStateFromRow(row);
  }

  async verifyStoredContent(taskId: string): Promise<void> {
    const [row] = (await this.manager.query(
      `SELECT content_bytes, ${this.sql.byteLength("content")} AS stored FROM task_plans WHERE task_id = ?`,
      [taskId],
    )) as { content_bytes: number | string; stored: number | string }[];
    if (row) verifySize(Number(row.stored), Number(row.content_bytes), { taskId, row: "plan" });
  }

  // Every stored copy of plan text the task's history holds: its revisions' and its change rows'.
  async historyUsage(taskId: string): Promise<{ revisions: number; bytes: number }> {
    const { rows } = await this.send(
      "SELECT (SELECT COUNT(*) FROM task_plan_revisions WHERE task_id = ?) AS revisions," +
        " (SELECT COALESCE(SUM(content_bytes), 0) FROM task_plan_revisions WHERE task_id = ?) AS revision_bytes," +
        ` (SELECT COALESCE(SUM(${this.changeStoredBytes()}), 0) FROM task_plan_changes WHERE task_id = ?)` +
        " AS change_bytes",
      [taskId, taskId, taskId],
    );
    const row = rows[0] as Record<string, number | string | null> | undefined;
    return {
      revisions: Number(row?.revisions ?? 0),
      bytes: Number(row?.revision_bytes ?? 0) + Number(row?.change_bytes ?? 0),
    };
  }

  // The stored text of a change row: recorded, or measured in rows written before it was recorded.
  private changeStoredBytes(): string {
    const { byteLength } = this.sql;
    return `COALESCE(stored_bytes, COALESCE(${byteLength("content")}, 0) + COALESCE(${byteLength("content_tail")}, 0))`;
  }

  async trimChangeHistory(taskId: string, bytes: number, keepFromVersion: number): Promise<number> {
    let freed = 0;
    let last: ChangeKey | null = null;
    while (freed < bytes) {
      const { rows } = await this.send(
        `SELECT version, step, ${this.changeStoredBytes()} AS bytes FROM task_plan_changes WHERE task_id = ?` +
          ` AND version < ?${last ? ` AND ${AFTER_KEY}` : ""} ORDER BY version, step LIMIT 100`,
        [taskId, keepFromVersion, ...(last ? afterKey(last) : [])],
      );
      const page = rows as { version: number | string; step: number | string; bytes: number | string }[];
      for (const row of page) {
        if (freed >= bytes) break;
        freed += Number(row.bytes);
        last = { version: Number(row.version), step: Number(row.step) === 1 ? 1 : 0 };
      }
      if (page.length < 100) break;
    }
    if (last === null) return 0;
    await this.send(`DELETE FROM task_plan_changes WHERE task_id = ? AND NOT ${AFTER_KEY}`, [
      taskId,
      ...afterKey(last),
    ]);
    return freed;
  }

  async findRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null> {
    return revisionWithContent((sql, parameters) => this.manager.query(sql, parameters), taskId, revisionId);
  }

  async insertHead(head: HeadWrite): Promise<void> {
    const { content } = head;
    if (typeof content !== "string") throw new Error("a new HEAD row needs its whole content");
    await this.manager.insert(PlanEntity, headToEntity({ ...head, content }));
  }

  // The hot statements of every write are written by hand (same text on both databases but for the
  // append's composition): TypeORM's query builder cost more CPU than the driver and the database.
  async updateHead(head: HeadWrite, fenceVersion: number): Promise<void> {
    const { content } = head;
    const whole = typeof content === "string";
    const result = await this.send(
      "UPDATE task_plans SET title = ?, content = " +
        (whole ? "?" : this.sql.keepPrefixThen("content")) +
        ", content_trimmed_chars = ?, content_trimmed_bytes = ?, content_bytes = ?, content_chars = ?," +
        " version = ?, created_by = ?, created_at = ?, updated_at = ?, latest_revision_number = ?, deleted = ?," +
        " implementation_started_at = ?, implementation_started_by = ?, implementation_started_session_id = ?" +
        " WHERE task_id = ? AND version = ?" +
        (whole ? "" : ` AND ${this.sql.byteLength("content")} = content_bytes`),
      [
        head.title,
        ...(whole ? [content] : [this.sql.keptLength(content), content.suffix]),
        head.trimmedChars ?? null,
        head.trimmedBytes ?? null,
        head.contentBytes,
        head.contentChars,
        head.version,
        head.createdBy,
        head.createdAt.getTime(),
        head.updatedAt.getTime(),
        head.latestRevisionNumber,
        head.deleted ? 1 : 0,
        head.implementationStartedAt?.getTime() ?? null,
        head.implementationStartedBy,
        head.implementationStartedSessionId,
        head.taskId,
        fenceVersion,
      ],
    );
    if (result.affected === 1) return;
    // An append composes on a stored text it never read: one whose size is not the recorded one
    // (truncated or altered outside the service) is not appended to.
    if (!whole) await this.verifyStoredContent(head.taskId);
    throw new StorageConflictError("plan version fence lost");
  }

  // A revision given without content takes the HEAD content this transaction just wrote instead of
  // the plan being sent again (the plan crosses the wire at most once per write, never for an
  // append): marked as holding HEAD's, or else copied by the database.
  async insertRevision(revision: RevisionMeta & { readonly content?: string }): Promise<void> {
    const [content, contentParams] = this.revisionContent(revision);
    await this.send(
      "INSERT INTO task_plan_revisions (id, task_id, revision_number, title, content, content_at_head," +
        " content_bytes, content_chars, author_kind, author_name, revert_of_revision_id, created_at, updated_at," +
        ` row_version) VALUES (?, ?, ?, ?, ${content}, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        revision.id,
        revision.taskId,
        revision.number,
        revision.title,
        ...contentParams,
        revision.contentBytes,
        revision.contentChars,
        revision.authorKind,
        revision.authorName,
        revision.revertOfRevisionId,
        revision.createdAt.getTime(),
        revision.updatedAt.getTime(),
        revision.rowVersion,
      ],
    );
  }

  /** Coalescing: the newest revision takes the new title, content and sizes (its author and creation stay). */
  async updateRevision(
    revision: RevisionMeta & { readonly content?: string },
    fenceRowVersion: number,
  ): Promise<void> {
    const [content, contentParams] = this.revisionContent(revision);
    const result = await this.send(
      `UPDATE task_plan_revisions SET title = ?, content = ${content}, content_at_head = ?, content_bytes = ?,` +
        " content_chars = ?, updated_at = ?, row_version = ? WHERE id = ? AND task_id = ? AND row_version = ?",
      [
        revision.title,
        ...contentParams,
        revision.contentBytes,
        revision.contentChars,
        revision.updatedAt.getTime(),
        revision.rowVersion,
        revision.id,
        revision.taskId,
        fenceRowVersion,
      ],
    );
    if (result.affected !== 1) throw new StorageConflictError("revision row version fence lost");
  }

  // The content column's value and the content_at_head mark (the SQL and its parameters).
  private revisionContent(revision: {
    readonly taskId: string;
    readonly content?: string;
  }): [string, unknown[]] {
    if (revision.content !== undefined) return ["?", [revision.content, 0]];
    return this.contentAtHead ? ["''", [1]] : [HEAD_CONTENT, [revision.taskId, 0]];
  }

  // Whatever the setting says now: rows may have been marked while it was on. One row, by the
  // unique (task_id, revision_number) index: the statement never reads the task's history.
  async detachRevisionContent(taskId: string, newestNumber: number): Promise<void> {
    await this.send(
      `UPDATE task_plan_revisions SET content = ${HEAD_CONTENT}, content_at_head = 0` +
        " WHERE task_id = ? AND revision_number = ? AND content_at_head = 1",
      [taskId, taskId, newestNumber],
    );
  }

  private send(sql: string, parameters: unknown[]): Promise<StatementResult> {
    const runner = this.manager.queryRunner;
    if (!runner) throw new Error("a write transaction runs on a query runner");
    return sendStatement(runner, this.dialect, sql, parameters);
  }

  async findRequest(taskId: string, requestId: string): Promise<WriteRequestRecord | null> {
    const row = await this.manager.findOneBy(WriteRequestEntity, { taskId, requestId });
    return row ? { ...row, createdAt: new Date(row.createdAt) } : null;
  }

  async rememberRequest(request: WriteRequestRecord, forgetBefore: Date): Promise<void> {
    await this.manager
      .createQueryBuilder()
      .delete()
      .from(WriteRequestEntity)
      .where("task_id = :taskId AND created_at < :before", {
        taskId: request.taskId,
        before: forgetBefore.getTime(),
      })
      .execute();
    await this.manager.insert(WriteRequestEntity, { ...request, createdAt: request.createdAt.getTime() });
  }

  async recordChange(change: ChangeRecord, content: ChangeContent): Promise<void> {
    const copied = content.form === "head";
    await this.send(
      `INSERT INTO task_plan_changes (${CHANGE_COLUMNS}, ${PREFIX_COLUMNS}, stored_bytes)` +
        ` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${copied ? HEAD_CONTENT : "NULL"}, ?, ?,` +
        ` ${copied ? HEAD_CONTENT_BYTES : "?"})`,
      [
        ...changeParameters(change),
        ...(copied ? [change.taskId] : []),
        ...prefixParameters(content),
        copied ? change.taskId : content.form === "prefix" ? Buffer.byteLength(content.tail, "utf8") : 0,
      ],
    );
  }

  // Runs before the HEAD update, so HEAD_CONTENT is still the content of `version`.
  async materializeChanges(taskId: string, version: number): Promise<void> {
    await this.send(
      `UPDATE task_plan_changes SET content = ${HEAD_CONTENT},` +
        ` stored_bytes = COALESCE(stored_bytes, 0) + ${HEAD_CONTENT_BYTES}` +
        " WHERE task_id = ? AND version = ? AND content IS NULL AND content_kept_chars IS NOT NULL",
      [taskId, taskId, taskId, version],
    );
  }

  async deleteTask(taskId: string): Promise<void> {
    await this.send("DELETE FROM task_plan_changes WHERE task_id = ?", [taskId]);
    await this.manager.delete(WriteRequestEntity, { taskId });
    await this.manager.delete(RevisionEntity, { taskId });
    await this.manager.delete(PlanEntity, { taskId });
    await this.manager.delete(TaskEntity, { id: taskId });
  }
}

// One revision with its content (its own copy, or its HEAD's while marked content_at_head), read in
// one statement so that a write in between cannot pair it with another version's HEAD.
async function revisionWithContent(
  query: (sql: string, parameters: unknown[]) => Promise<unknown>,
  taskId: string,
  revisionId: string,
): Promise<RevisionRecord | null> {
  const rows = (await query(
    `SELECT r.id, r.task_id, r.revision_number, r.title, ${REVISION_CONTENT} AS content, r.content_bytes,` +
      " r.content_chars, r.author_kind, r.author_name, r.revert_of_revision_id, r.created_at, r.updated_at," +
      " r.row_version FROM task_plan_revisions r LEFT JOIN task_plans p ON p.task_id = r.task_id" +
      " WHERE r.task_id = ? AND r.id = ?",
    [taskId, revisionId],
  )) as Record<string, string | number | null>[];
  const row = rows[0];
  if (!row) return null;
  return revisionFromEntity({
    id: String(row.id),
    taskId: String(row.task_id),
    revisionNumber: Number(row.revision_number),
    title: String(row.title),
    content: String(row.content ?? ""),
    contentBytes: Number(row.content_bytes),
    contentChars: Number(row.content_chars),
    authorKind: String(row.author_kind),
    authorName: String(row.author_name),
    revertOfRevisionId: row.revert_of_revision_id === null ? null : String(row.revert_of_revision_id),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    rowVersion: Number(row.row_version),
  });
}
