import type { Dialect } from "./data-source";

/** The SQL the two databases spell differently, in one place. */
export interface SqlDialect {
  /**
   * The locking read of a write: task, HEAD (with the history usage kept on it) and newest revision
   * in one statement (see locked-state.ts).
   */
  lockForWrite(withContent: boolean): string;
  /** The size in bytes of the stored text in `column` (the database measures it). */
  byteLength(column: string): string;
  /**
   * `column`'s kept prefix followed by the suffix: two bound parameters, the prefix's length as
   * `keptLength` measures it, then the suffix.
   */
  keepPrefixThen(column: string): string;
  /** The length of an append's kept prefix in the unit keepPrefixThen cuts by. */
  keptLength(change: { readonly keepChars: number; readonly keepBytes: number }): number;
}

/**
 * A revision's content in a query joining it (`r`) to its task's HEAD (`p`): its own copy, or HEAD's
 * while it is marked as holding HEAD's content (content_at_head).
 */
export const REVISION_CONTENT = "CASE WHEN r.content_at_head = 1 THEN p.content ELSE r.content END";

const lockForWrite = (lockSuffix: string) => (withContent: boolean) =>
  [
    "SELECT t.id AS t_id, t.workspace_id AS t_workspace_id, t.title AS t_title, t.created_at AS t_created_at,",
    "p.task_id AS p_task_id, p.title AS p_title, p.content_bytes AS p_content_bytes,",
    "p.content_chars AS p_content_chars, p.version AS p_version, p.created_by AS p_created_by,",
    "p.created_at AS p_created_at, p.updated_at AS p_updated_at, p.latest_revision_number AS p_latest_revision_number,",
    "p.deleted AS p_deleted, p.implementation_started_at AS p_implementation_started_at,",
    "p.implementation_started_by AS p_implementation_started_by,",
    "p.implementation_started_session_id AS p_implementation_started_session_id,",
    "p.content_trimmed_chars AS p_trimmed_chars, p.content_trimmed_bytes AS p_trimmed_bytes,",
    "p.history_revisions AS p_history_revisions, p.history_bytes AS p_history_bytes,",
    "p.history_version AS p_history_version,",
    // Without content the text is not touched at all (not even measured): an append's UPDATE checks
    // the stored size as it composes (see HeadWrites.update).
    withContent ? "p.content AS p_content," : "NULL AS p_content,",
    "r.id AS r_id, r.task_id AS r_task_id, r.revision_number AS r_revision_number, r.title AS r_title,",
    withContent ? `${REVISION_CONTENT} AS r_content,` : "NULL AS r_content,",
    "r.content_bytes AS r_content_bytes, r.content_chars AS r_content_chars, r.author_kind AS r_author_kind,",
    "r.author_name AS r_author_name, r.revert_of_revision_id AS r_revert_of_revision_id,",
    "r.created_at AS r_created_at, r.updated_at AS r_updated_at, r.row_version AS r_row_version",
    "FROM tasks t LEFT JOIN task_plans p ON p.task_id = t.id",
    "LEFT JOIN task_plan_revisions r ON r.task_id = t.id AND r.revision_number = p.latest_revision_number",
    `WHERE t.id = ?${lockSuffix}`,
  ].join(" ");

const DIALECTS: Record<Dialect, SqlDialect> = {
  // InnoDB locks every row the locking read reads (task, HEAD, newest revision) until commit.
  mysql: {
    lockForWrite: lockForWrite(" FOR UPDATE"),
    byteLength: (column) => `OCTET_LENGTH(${column})`,
    // MySQL strings carry their length: LEFT counts utf8mb4 characters (code points), NUL included.
    keepPrefixThen: (column) => `CONCAT(LEFT(${column}, ?), ?)`,
    keptLength: (change) => change.keepChars,
  },
  // SQLite has no row locks and needs none: the store runs one transaction at a time.
  sqlite: {
    lockForWrite: lockForWrite(""),
    byteLength: (column) => `length(CAST(${column} AS BLOB))`,
    // SQLite's text functions (substr, length) stop at the first U+0000; cut the bytes instead (a
    // BLOB's substr counts bytes and reads them all), which the trimmed byte length says exactly.
    // The substr of an empty BLOB is NULL, not empty: COALESCE keeps an append to "" from NULL.
    keepPrefixThen: (column) => `COALESCE(CAST(substr(CAST(${column} AS BLOB), 1, ?) AS TEXT), '') || ?`,
    keptLength: (change) => change.keepBytes,
  },
};

export function sqlDialect(dialect: Dialect): SqlDialect {
  return DIALECTS[dialect];
}
