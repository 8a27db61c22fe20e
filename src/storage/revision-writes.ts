import type { RevisionMeta } from "../plans/ports/records";
import { HEAD_CONTENT } from "./change-writes";
import type { WriteStatements } from "./write-statements";

type RevisionWrite = RevisionMeta & { readonly content?: string };

/**
 * The statements of a write on the revision rows (task_plan_revisions). A revision given without
 * content takes the HEAD content its transaction just wrote instead of the plan being sent again
 * (the plan crosses the wire at most once per write, never for an append): marked as holding HEAD's
 * (`contentAtHead`), or else copied by the database. Every statement is deferred (write-statements.ts).
 */
export class RevisionWrites {
  constructor(
    private readonly statements: WriteStatements,
    private readonly contentAtHead: boolean,
  ) {}

  insert(revision: RevisionWrite): void {
    const [content, contentParams] = this.contentOf(revision);
    this.statements.defer(
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
  update(revision: RevisionWrite, fenceRowVersion: number): void {
    const [content, contentParams] = this.contentOf(revision);
    this.statements.defer(
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
      { lost: "revision row version fence lost" },
    );
  }

  /**
   * Gives revision `newestNumber` its own copy of HEAD's content if it was marked as holding HEAD's
   * (whatever the setting says now: rows may have been marked while it was on). One row, by the
   * (task_id, revision_number) key: the statement never reads the task's history.
   */
  detachContent(taskId: string, newestNumber: number): void {
    this.statements.defer(
      `UPDATE task_plan_revisions SET content = ${HEAD_CONTENT}, content_at_head = 0` +
        " WHERE task_id = ? AND revision_number = ? AND content_at_head = 1",
      [taskId, taskId, newestNumber],
    );
  }

  // The content column's value and the content_at_head mark (the SQL and its parameters).
  private contentOf(revision: RevisionWrite): [string, unknown[]] {
    if (revision.content !== undefined) return ["?", [revision.content, 0]];
    return this.contentAtHead ? ["''", [1]] : [HEAD_CONTENT, [revision.taskId, 0]];
  }
}
