import type {
  AuthorKind,
  HistoryUsage,
  LockedHead,
  LockedRevision,
  LockedState,
  ReadKind,
  RevisionRecord,
  WriteRequestRecord,
} from "../plans/ports/records";
import { trimmedLengths } from "../text/unicode";
import { verifyContent } from "./record-mapping";

/** One row of the locking read (sql-dialect.ts `lockForWrite`), as both drivers return it. */
export type LockedRow = Record<string, string | number | null>;

const num = (value: string | number | null | undefined): number => Number(value);
const str = (value: string | number | null | undefined): string => String(value ?? "");
const date = (value: string | number | null | undefined): Date => new Date(Number(value));
const authorKind = (value: string | number | null | undefined): AuthorKind =>
  value === "user" ? "user" : "agent";

/**
 * The task, HEAD and newest revision of one locking read made as `reads` says, with the task's
 * history usage; throws StorageCorruptionError for a damaged row. A HEAD row without trimmed
 * lengths (written before they were recorded) comes with its content, which they are measured on.
 */
export function lockedStateFromRow<K extends ReadKind>(
  row: LockedRow,
  reads: K,
  history: HistoryUsage,
  target: RevisionRecord | null,
  remembered: WriteRequestRecord | null,
): LockedState<K> {
  return {
    task: {
      id: str(row.t_id),
      workspaceId: str(row.t_workspace_id),
      title: str(row.t_title),
      createdAt: date(row.t_created_at),
    },
    head: row.p_task_id === null ? null : (headOf(row, reads) as LockedHead<K>),
    // HEAD points at the newest revision (both are written in every write's transaction).
    latest: row.p_task_id === null || row.r_id === null ? null : (revisionOf(row) as LockedRevision<K>),
    history,
    target,
    remembered,
  };
}

/**
 * The history usage kept with HEAD, when it can be trusted: it is kept by every write since the
 * column was added, and stamped with the version it was kept at, so a HEAD written by a replica that
 * does not keep it (a rolling upgrade) is recounted. A task without a HEAD row has no history.
 */
export function keptHistoryOf(row: LockedRow): HistoryUsage | "recount" {
  if (row.p_task_id === null) return { revisions: 0, bytes: 0 };
  const { p_history_revisions: revisions, p_history_bytes: bytes, p_history_version: version } = row;
  if (revisions === null || bytes === null || version === null || num(version) !== num(row.p_version))
    return "recount";
  return { revisions: num(revisions), bytes: num(bytes) };
}

function headOf(row: LockedRow, reads: ReadKind): LockedHead {
  const contentBytes = num(row.p_content_bytes);
  const content = row.p_content === null ? null : str(row.p_content);
  // A mismatch means the row was truncated or altered outside the service; writing on it would
  // silently lose text. Without the content, the append's UPDATE checks it.
  if (content !== null) verifyContent(content, contentBytes, { taskId: str(row.p_task_id), row: "plan" });
  const kept = keptLengths(row, content);
  return {
    taskId: str(row.p_task_id),
    title: str(row.p_title),
    content: reads === "content" ? content : null,
    contentBytes,
    contentChars: num(row.p_content_chars),
    version: num(row.p_version),
    createdBy: authorKind(row.p_created_by),
    createdAt: date(row.p_created_at),
    updatedAt: date(row.p_updated_at),
    latestRevisionNumber: num(row.p_latest_revision_number),
    deleted: num(row.p_deleted) !== 0,
    implementationStartedAt:
      row.p_implementation_started_at === null ? null : date(row.p_implementation_started_at),
    implementationStartedBy:
      row.p_implementation_started_by === null ? null : str(row.p_implementation_started_by),
    implementationStartedSessionId:
      row.p_implementation_started_session_id === null ? null : str(row.p_implementation_started_session_id),
    trimmedChars: kept.trimmedChars,
    trimmedBytes: kept.trimmedBytes,
  };
}

// The trimmed lengths as recorded, or measured on the content of a row that has none.
function keptLengths(row: LockedRow, content: string | null): { trimmedChars: number; trimmedBytes: number } {
  if (row.p_trimmed_chars !== null && row.p_trimmed_bytes !== null)
    return { trimmedChars: num(row.p_trimmed_chars), trimmedBytes: num(row.p_trimmed_bytes) };
  if (content === null) throw new Error("a HEAD row without trimmed lengths was read without its content");
  return trimmedLengths(content);
}

function revisionOf(row: LockedRow): LockedRevision {
  const content = row.r_content === null ? null : str(row.r_content);
  const contentBytes = num(row.r_content_bytes);
  if (content !== null)
    verifyContent(content, contentBytes, { taskId: str(row.r_task_id), row: `revision ${str(row.r_id)}` });
  return {
    id: str(row.r_id),
    taskId: str(row.r_task_id),
    number: num(row.r_revision_number),
    title: str(row.r_title),
    content,
    contentBytes,
    contentChars: num(row.r_content_chars),
    authorKind: authorKind(row.r_author_kind),
    authorName: str(row.r_author_name),
    revertOfRevisionId: row.r_revert_of_revision_id === null ? null : str(row.r_revert_of_revision_id),
    createdAt: date(row.r_created_at),
    updatedAt: date(row.r_updated_at),
    rowVersion: num(row.r_row_version),
  };
}
