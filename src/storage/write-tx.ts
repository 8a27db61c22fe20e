import type { EntityManager } from "typeorm";
import type { Dialect } from "./data-source";
import { PlanEntity } from "./entities/plan.entity";
import { RevisionEntity } from "./entities/revision.entity";
import { TaskEntity } from "./entities/task.entity";
import { WriteRequestEntity } from "./entities/write-request.entity";
import type { PlanWriteTx } from "../plans/ports/plan-store";
import type {
  ChangeContent,
  ChangeRecord,
  HeadWrite,
  LockedState,
  RevisionMeta,
  RevisionRecord,
  WriteRequestRecord,
} from "../plans/ports/records";
import { StorageConflictError } from "../plans/ports/store-errors";
import { ChangeWrites, HEAD_CONTENT } from "./change-writes";
import { sendStatement, type StatementResult } from "./hot-statement";
import { lockedStateFromRow, type LockedRow } from "./locked-state";
import { headToEntity, verifySize } from "./record-mapping";
import { revisionWithContent } from "./revision-rows";
import { type SqlDialect, sqlDialect } from "./sql-dialect";

/** One write transaction. On MySQL its first read locks the task, HEAD and newest revision rows. */
export class TypeOrmWriteTx implements PlanWriteTx {
  private readonly sql: SqlDialect;
  private readonly changes: ChangeWrites;

  constructor(
    private readonly manager: EntityManager,
    private readonly dialect: Dialect,
    private readonly contentAtHead: boolean,
  ) {
    this.sql = sqlDialect(dialect);
    this.changes = new ChangeWrites((sql, parameters) => this.send(sql, parameters), this.sql);
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

  historyUsage(taskId: string): Promise<{ revisions: number; bytes: number }> {
    return this.changes.historyUsage(taskId);
  }

  trimChangeHistory(taskId: string, bytes: number, keepFromVersion: number): Promise<number> {
    return this.changes.trimChangeHistory(taskId, bytes, keepFromVersion);
  }

  recordChange(change: ChangeRecord, content: ChangeContent): Promise<void> {
    return this.changes.recordChange(change, content);
  }

  materializeChanges(taskId: string, version: number): Promise<void> {
    return this.changes.materializeChanges(taskId, version);
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

  async deleteTask(taskId: string): Promise<void> {
    await this.send("DELETE FROM task_plan_changes WHERE task_id = ?", [taskId]);
    await this.manager.delete(WriteRequestEntity, { taskId });
    await this.manager.delete(RevisionEntity, { taskId });
    await this.manager.delete(PlanEntity, { taskId });
    await this.manager.delete(TaskEntity, { id: taskId });
  }
}
