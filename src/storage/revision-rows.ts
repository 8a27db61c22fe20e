import { revisionFromEntity } from "./record-mapping";
import { REVISION_CONTENT } from "./sql-dialect";
import type { RevisionRecord } from "../plans/ports/records";

/** The metadata columns of a revision (entity property names), for listings that read no text. */
export const REVISION_META_COLUMNS = [
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

/** A query on some connection or transaction: SQL with `?` placeholders, and its parameters. */
export type Query = (sql: string, parameters: unknown[]) => Promise<unknown>;

// One revision with its content (its own copy, or its HEAD's while marked content_at_head), read in
// one statement so that a write in between cannot pair it with another version's HEAD.
export async function revisionWithContent(
  query: Query,
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
