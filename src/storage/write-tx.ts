import type { EntityManager } from "typeorm";
import type { Dialect } from "./data-source";
import { PlanEntity } from "./entities/plan.entity";
import { RevisionEntity } from "./entities/revision.entity";
import { TaskEntity } from "./entities/task.entity";
import { WriteRequestEntity } from "./entities/write-request.entity";
import type { PlanWriteTx } from "../plans/ports/plan-store";
import type {
  ChangeRecord,
  HeadMeta,
  HeadWrite,
  HistoryUsage,
  LockedState,
  PlanCommit,
  ReadKind,
  RevisionMeta,
  RevisionRecord,
  WriteRequestRecord,
} from "../plans/ports/records";
import { StorageConflictError } from "../plans/ports/store-errors";
import { type ChangeContent, changeContentOf, changeStoredBytes } from "./change-content";
import { ChangeWrites, HEAD_CONTENT } from "./change-writes";
import { sendStatement, type StatementResult } from "./hot-statement";
import { keptHistoryOf, lockedStateFromRow, type LockedRow } from "./locked-state";
import { headToEntity, verifySize } from "./record-mapping";
import { revisionWithContent } from "./revision-rows";
import { type SqlDialect, sqlDialect } from "./sql-dialect";

/** What the locking read found, for the commit that follows it. */
interface Locked {
  readonly taskId: string;
  readonly head: HeadMeta | null;
  history: HistoryUsage;
}

/**
 * One write transaction. On MySQL its first read locks the task, HEAD and newest revision rows.
 * `commit` turns a decision into rows: the order of the statements, the content held at HEAD, the
 * change row and the history usage kept with HEAD are decided here and nowhere else.
 */
export class TypeOrmWriteTx implements PlanWriteTx {
  private readonly sql: SqlDialect;
  private readonly changes: ChangeWrites;
  private locked: Locked | null = null;

  constructor(
    private readonly manager: EntityManager,
    private readonly dialect: Dialect,
    private readonly contentAtHead: boolean,
  ) {
    this.sql = sqlDialect(dialect);
    this.changes = new ChangeWrites((sql, parameters) => this.send(sql, parameters), this.sql);
  }

  async lockForWrite<K extends ReadKind>(taskId: string, reads: K): Promise<LockedState<K> | null> {
    const { rows } = await this.send(this.sql.lockForWrite(reads === "content"), [taskId]);
    const row = rows[0] as LockedRow | undefined;
    if (!row) return null;
    // A HEAD written before the trimmed lengths were recorded brings its content (read under the lock
    // just taken) for an append to compose here and record them.
    if (reads === "metadata" && row.p_task_id !== null && row.p_trimmed_chars === null) {
      const [head] = (await this.manager.query("SELECT content FROM task_plans WHERE task_id = ?", [
        taskId,
      ])) as { content: string }[];
      row.p_content = head?.content ?? null;
    }
    const kept = keptHistoryOf(row);
    const history = kept === "recount" ? await this.changes.countHistory(taskId) : kept;
    const state = lockedStateFromRow(row, reads, history);
    this.locked = { taskId, head: state.head, history };
    return state;
  }

  async verifyStoredContent(taskId: string): Promise<void> {
    const [row] = (await this.manager.query(
      `SELECT content_bytes, ${this.sql.byteLength("content")} AS stored FROM task_plans WHERE task_id = ?`,
      [taskId],
    )) as { content_bytes: number | string; stored: number | string }[];
    if (row) verifySize(Number(row.stored), Number(row.content_bytes), { taskId, row: "plan" });
  }

  async commit(commit: PlanCommit): Promise<HistoryUsage> {
    if (commit.kind === "delete-task") {
      await this.deleteTask(commit.taskId);
      return { revisions: 0, bytes: 0 };
    }
    const locked = this.lockedFor(commit.head.taskId);
    const { head, change } = commit;
    const content = changeContentOf(head);
    let { revisions, bytes } = locked.history;
    // A write other than an append replaces the content older change rows may be derived from.
    const prior = locked.head !== null && !locked.head.deleted ? locked.head : null;
    if (prior !== null && content.form !== "prefix")
      bytes += (await this.changes.materializeChanges(head.taskId, prior.version)) * prior.contentBytes;
    if (commit.kind === "delete") {
      // The tombstone holds no content: the newest revision takes its own copy first.
      await this.detachRevisionContent(head.taskId, head.latestRevisionNumber);
    } else if (commit.coalesces === null && commit.fenceVersion !== null) {
      // A new revision moves HEAD past the newest one (numbered just below it), which may hold its
      // content as HEAD's.
      await this.detachRevisionContent(head.taskId, commit.revision.number - 1);
    }
    if (commit.kind === "content") {
      const replaced = commit.coalesces?.contentBytes ?? 0;
      revisions += commit.coalesces === null ? 1 : 0;
      bytes += commit.revision.contentBytes - replaced;
    }
    bytes += changeStoredBytes(content, head);
    locked.history = { revisions, bytes };
    if (commit.fenceVersion === null) await this.insertHead(head, locked.history);
    else await this.updateHead(head, commit.fenceVersion, locked.history);
    if (commit.kind === "content") {
      if (commit.coalesces === null) await this.insertRevision(commit.revision);
      else await this.updateRevision(commit.revision, commit.coalesces.rowVersion);
    }
    await this.recordChange(change, content);
    return locked.history;
  }

  async yieldChangeHistory(taskId: string, bytes: number, keepFromVersion: number): Promise<HistoryUsage> {
    const locked = this.lockedFor(taskId);
    const freed = await this.changes.trimChangeHistory(taskId, bytes, keepFromVersion);
    if (freed === 0) return locked.history;
    locked.history = { ...locked.history, bytes: locked.history.bytes - freed };
    await this.changes.keepHistory(taskId, locked.history);
    return locked.history;
  }

  async recountHistory(taskId: string): Promise<HistoryUsage> {
    const locked = this.lockedFor(taskId);
    locked.history = await this.changes.countHistory(taskId);
    await this.changes.keepHistory(taskId, locked.history);
    return locked.history;
  }

  // The commit follows the locking read of its task in the same transaction (the fence of every write).
  private lockedFor(taskId: string): Locked {
    if (this.locked?.taskId !== taskId) throw new Error("a write commits after the locking read of its task");
    return this.locked;
  }

  /** Records a change this transaction commits, its content held as `content` says. */
  recordChange(change: ChangeRecord, content: ChangeContent): Promise<void> {
    return this.changes.recordChange(change, content);
  }

  async findRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null> {
    return revisionWithContent((sql, parameters) => this.manager.query(sql, parameters), taskId, revisionId);
  }

  /** Inserts the first HEAD row of a task (whole content), keeping `history` with it. */
  async insertHead(head: HeadWrite, history: HistoryUsage): Promise<void> {
    const { content } = head;
    if (typeof content !== "string") throw new Error("a new HEAD row needs its whole content");
    await this.manager.insert(PlanEntity, {
      ...headToEntity({ ...head, content }),
      historyRevisions: history.revisions,
      historyBytes: history.bytes,
      historyVersion: head.version,
    });
  }

  // The hot statements of every write are written by hand (same text on both databases but for the
  // append's composition): TypeORM's query builder cost more CPU than the driver and the database.
  /**
   * The fence: updates HEAD (keeping `history` with it) only where its version is still
   * `fenceVersion`, and throws StorageConflictError unless exactly one row changed. An append also
   * requires the stored text to have its recorded size (StorageCorruptionError when it has not).
   */
  async updateHead(head: HeadWrite, fenceVersion: number, history: HistoryUsage): Promise<void> {
    const { content } = head;
    const whole = typeof content === "string";
    const result = await this.send(
      "UPDATE task_plans SET title = ?, content = " +
        (whole ? "?" : this.sql.keepPrefixThen("content")) +
        ", content_trimmed_chars = ?, content_trimmed_bytes = ?, content_bytes = ?, content_chars = ?," +
        " version = ?, created_by = ?, created_at = ?, updated_at = ?, latest_revision_number = ?, deleted = ?," +
        " implementation_started_at = ?, implementation_started_by = ?, implementation_started_session_id = ?," +
        " history_revisions = ?, history_bytes = ?, history_version = ?" +
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
        history.revisions,
        history.bytes,
        head.version,
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
