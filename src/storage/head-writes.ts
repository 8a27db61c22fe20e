import type { HeadWrite, HistoryUsage } from "../plans/ports/records";
import type { Send } from "./hot-statement";
import { verifySize } from "./record-mapping";
import type { SqlDialect } from "./sql-dialect";
import type { WriteStatements } from "./write-statements";

/**
 * The statements of a write on the HEAD row (task_plans): the first insert, the fenced update, and
 * the check of the stored text's size. The history usage is kept with HEAD in the same statement.
 * The writes are deferred (write-statements.ts): their errors, a lost fence's included, come when
 * the transaction sends its next statement or commits.
 */
export class HeadWrites {
  constructor(
    private readonly statements: WriteStatements,
    private readonly sql: SqlDialect,
  ) {}

  // Every statement is written by hand (same text on both databases but for the append's
  // composition): TypeORM's query builder cost more CPU than the driver and the database. Times are
  // epoch milliseconds and flags 0/1, as the entity's columns (entities/plan.entity.ts) hold them.

  /** Inserts the first HEAD row of a task (whole content), keeping `history` with it. */
  insert(head: HeadWrite, history: HistoryUsage): void {
    const { content } = head;
    if (typeof content !== "string") throw new Error("a new HEAD row needs its whole content");
    this.statements.defer(
      "INSERT INTO task_plans (task_id, title, content, content_trimmed_chars, content_trimmed_bytes," +
        " content_bytes, content_chars, version, created_by, created_at, updated_at, latest_revision_number," +
        " deleted, implementation_started_at, implementation_started_by, implementation_started_session_id," +
        " history_revisions, history_bytes, history_version)" +
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      [head.taskId, head.title, content, ...headColumns(head, history)],
    );
  }

  /**
   * The fence: updates HEAD (keeping `history` with it) only where its version is still
   * `fenceVersion`; the write is refused (StorageConflictError) unless exactly one row changed. An
   * append also requires the stored text to have its recorded size (StorageCorruptionError when it
   * has not: an append composes on a stored text it never read, and is not made to a truncated or
   * altered one).
   */
  update(head: HeadWrite, fenceVersion: number, history: HistoryUsage): void {
    const { content } = head;
    const whole = typeof content === "string";
    const { taskId } = head;
    this.statements.defer(
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
        ...headColumns(head, history),
        taskId,
        fenceVersion,
      ],
      {
        lost: "plan version fence lost",
        check: whole ? undefined : (send) => this.verifyStoredContent(taskId, send),
      },
    );
  }

  /** Throws StorageCorruptionError when the stored text's size is not its recorded one. */
  async verifyStoredContent(taskId: string, send: Send = this.statements.send): Promise<void> {
    const { rows } = await send(
      `SELECT content_bytes, ${this.sql.byteLength("content")} AS stored FROM task_plans WHERE task_id = ?`,
      [taskId],
    );
    const row = rows[0] as { content_bytes: number | string; stored: number | string } | undefined;
    if (row) verifySize(Number(row.stored), Number(row.content_bytes), { taskId, row: "plan" });
  }
}

// The values of the columns from content_trimmed_chars to history_version, in the statements' order.
function headColumns(head: HeadWrite, history: HistoryUsage): unknown[] {
  return [
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
  ];
}
