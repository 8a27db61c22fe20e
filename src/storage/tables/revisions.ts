import { Column, Entity, PrimaryColumn } from "typeorm";
import type {
  LockedRevision,
  ChecklistProgress,
  MergeMarker,
  ReadKind,
  RevisionMeta,
  RevisionRecord,
} from "../../plans/ports/records";
import type { WriteStatements } from "../transaction";
import {
  authorKindOf,
  type Cell,
  cellsOf,
  date,
  isNull,
  num,
  placeholders,
  type Query,
  type Row,
  str,
  strOrNull,
  checkedContent,
  stampedChecklist,
} from "./row";

/**
 * The revision table (`task_plan_revisions`): its columns, its row codec (the locking read, the
 * plain reads and the writes all use it), and its statements. `UNIQUE(task_id, revision_number)`
 * fences a new revision; `row_version` fences a coalesced one. A revision's content is its own copy,
 * or, while `content_at_head` is 1, its task's HEAD content (devices/content-at-head.ts).
 */

/** Every column but the content and its mark, in the order revisionValues gives their values. */
export const REVISION_META_COLUMNS = [
  "id",
  "task_id",
  "revision_number",
  "title",
  "content_bytes",
  "content_chars",
  "author_kind",
  "author_name",
  "revert_of_revision_id",
  "created_at",
  "updated_at",
  "row_version",
  "merged_from_version",
  "merged_to_version",
  "checklist_checked",
  "checklist_total",
  "checklist_row_version",
] as const;

/**
 * A revision's content in a query joining it (`r`) to its task's HEAD (`p`): its own copy, or HEAD's
 * while it is marked as holding HEAD's content (content_at_head).
 */
export const REVISION_CONTENT = "CASE WHEN r.content_at_head = 1 THEN p.content ELSE r.content END";

// One revision row as a literal (no spread: V8 builds a spread object many times slower).
function revisionOf<C>(cell: Cell, content: C) {
  return {
    id: str(cell("id")),
    taskId: str(cell("task_id")),
    number: num(cell("revision_number")),
    title: str(cell("title")),
    content,
    contentBytes: num(cell("content_bytes")),
    contentChars: num(cell("content_chars")),
    authorKind: authorKindOf(cell("author_kind")),
    authorName: str(cell("author_name")),
    revertOfRevisionId: strOrNull(cell("revert_of_revision_id")),
    createdAt: date(cell("created_at")),
    updatedAt: date(cell("updated_at")),
    rowVersion: num(cell("row_version")),
    merge: mergeOf(cell),
    checklist: checklistOf(cell),
  };
}

// The checklist progress, as counted at the row's row version (row.ts stampedChecklist).
const checklistOf = (cell: Cell): ChecklistProgress | null =>
  stampedChecklist(cell, "checklist_row_version", "row_version");

// The merge marker: both columns set on a merged write's revision, neither on any other.
function mergeOf(cell: Cell): MergeMarker | null {
  const from = cell("merged_from_version");
  const to = cell("merged_to_version");
  return isNull(from) || isNull(to) ? null : { fromVersion: num(from), toVersion: num(to) };
}

// The row's content (when the read selected it), checked against its recorded size.
const contentOfRevision = (cell: Cell) =>
  checkedContent(cell, num(cell("content_bytes")), {
    taskId: str(cell("task_id")),
    row: `revision ${str(cell("id"))}`,
  });

/** A revision's metadata (a listing reads no text). */
export function revisionMetaFromRow(cell: Cell): RevisionMeta {
  const { content: _none, ...meta } = revisionOf(cell, null);
  return meta;
}

/** A revision with its content (checked against its recorded size: StorageCorruptionError). */
export function revisionFromRow(cell: Cell): RevisionRecord {
  return revisionOf(cell, contentOfRevision(cell) ?? "");
}

/** The newest revision as a write's locking read found it, with its content when it read it. */
export function lockedRevisionFromRow<K extends ReadKind>(cell: Cell): LockedRevision<K> {
  return revisionOf(cell, contentOfRevision(cell) as LockedRevision<K>["content"]);
}

const META = REVISION_META_COLUMNS.map((column) => `r.${column}`).join(", ");

/** Revisions numbered below `beforeNumber` (all when null), newest first, at most `limit`: metadata only. */
export async function listRevisions(
  query: Query,
  taskId: string,
  beforeNumber: number | null,
  limit: number,
): Promise<RevisionMeta[]> {
  const rows = (await query(
    `SELECT ${META} FROM task_plan_revisions r WHERE r.task_id = ?` +
      (beforeNumber === null ? "" : " AND r.revision_number < ?") +
      " ORDER BY r.revision_number DESC LIMIT ?",
    [taskId, ...(beforeNumber === null ? [] : [beforeNumber]), limit],
  )) as Row[];
  return rows.map((row) => revisionMetaFromRow(cellsOf(row, "")));
}

/**
 * One revision with its content (its own copy, or its HEAD's while marked content_at_head), read in
 * one statement so that a write in between cannot pair it with another version's HEAD.
 */
export async function revisionWithContent(
  query: Query,
  taskId: string,
  revisionId: string,
): Promise<RevisionRecord | null> {
  const rows = (await query(
    `SELECT ${META}, ${REVISION_CONTENT} AS content FROM task_plan_revisions r` +
      " LEFT JOIN task_plans p ON p.task_id = r.task_id WHERE r.task_id = ? AND r.id = ?",
    [taskId, revisionId],
  )) as Row[];
  const row = rows[0];
  return row ? revisionFromRow(cellsOf(row, "")) : null;
}

/** How a written revision holds its content: an SQL value for the content column, its parameters, and the mark. */
export interface RevisionContent {
  readonly sql: string;
  readonly parameters: unknown[];
  readonly atHead: boolean;
}

// The values of REVISION_META_COLUMNS, in order.
export function revisionValues(revision: RevisionMeta): unknown[] {
  return [
    revision.id,
    revision.taskId,
    revision.number,
    revision.title,
    revision.contentBytes,
    revision.contentChars,
    revision.authorKind,
    revision.authorName,
    revision.revertOfRevisionId,
    revision.createdAt.getTime(),
    revision.updatedAt.getTime(),
    revision.rowVersion,
    revision.merge?.fromVersion ?? null,
    revision.merge?.toVersion ?? null,
    revision.checklist?.checked ?? null,
    revision.checklist?.total ?? null,
    revision.checklist ? revision.rowVersion : null,
  ];
}

const INSERT_REVISION =
  `INSERT INTO task_plan_revisions (${REVISION_META_COLUMNS.join(", ")}, content_at_head, content)` +
  ` VALUES (${placeholders(REVISION_META_COLUMNS.length + 1)}`;

/** Inserts a new revision (deferred); a number already taken fails the transaction (UNIQUE). */
export function insertRevision(
  statements: WriteStatements,
  revision: RevisionMeta,
  content: RevisionContent,
): void {
  statements.defer(`${INSERT_REVISION}, ${content.sql})`, [
    ...revisionValues(revision),
    content.atHead ? 1 : 0,
    ...content.parameters,
  ]);
}

/**
 * Coalescing: the newest revision takes the new title, content and sizes (its author and creation
 * stay), fenced on its row version (deferred).
 */
export function updateRevision(
  statements: WriteStatements,
  revision: RevisionMeta,
  content: RevisionContent,
  fenceRowVersion: number,
): void {
  statements.defer(
    "UPDATE task_plan_revisions SET title = ?, content_bytes = ?, content_chars = ?, updated_at = ?," +
      " row_version = ?, checklist_checked = ?, checklist_total = ?, checklist_row_version = ?," +
      " content_at_head = ?," +
      ` content = ${content.sql} WHERE id = ? AND task_id = ? AND row_version = ?`,
    [
      revision.title,
      revision.contentBytes,
      revision.contentChars,
      revision.updatedAt.getTime(),
      revision.rowVersion,
      revision.checklist?.checked ?? null,
      revision.checklist?.total ?? null,
      revision.checklist ? revision.rowVersion : null,
      content.atHead ? 1 : 0,
      ...content.parameters,
      revision.id,
      revision.taskId,
      fenceRowVersion,
    ],
    { lost: "revision row version fence lost" },
  );
}

// The table as TypeORM declares it: the schema the migrations must leave
// (test/integration/storage/migration-replay.test.ts compares them). Never used to read or write
// rows: the codec above does.
/** Row of `task_plan_revisions`; UNIQUE(task_id, revision_number). */
@Entity({ name: "task_plan_revisions" })
export class RevisionEntity {
  // The entity's identity; on MySQL the table's primary key is (task_id, revision_number), and `id`
  // a unique key (migration RevisionLocality1765200000000: one task's rows stored together).
  @PrimaryColumn({ type: "varchar", length: 36 })
  id: string;

  @Column({ name: "task_id", type: "varchar", length: 128 })
  taskId: string;

  @Column({ name: "revision_number", type: "integer" })
  revisionNumber: number;

  @Column({ type: "varchar", length: 1000 })
  title: string;

  @Column({ type: "text" })
  content: string;

  @Column({ name: "content_bytes", type: "integer" })
  contentBytes: number;

  @Column({ name: "content_chars", type: "integer" })
  contentChars: number;

  @Column({ name: "author_kind", type: "varchar", length: 16 })
  authorKind: string;

  @Column({ name: "author_name", type: "varchar", length: 1000 })
  authorName: string;

  @Column({ name: "revert_of_revision_id", type: "varchar", length: 36, nullable: true })
  revertOfRevisionId: string | null;

  @Column({ name: "created_at", type: "bigint" })
  createdAt: number;

  @Column({ name: "updated_at", type: "bigint" })
  updatedAt: number;

  @Column({ name: "row_version", type: "integer" })
  rowVersion: number;

  @Column({ name: "merged_from_version", type: "bigint", nullable: true })
  mergedFromVersion: number | null;

  @Column({ name: "merged_to_version", type: "bigint", nullable: true })
  mergedToVersion: number | null;

  /** The content's checklist progress, counted when it was written (null: written before it was). */
  @Column({ name: "checklist_checked", type: "integer", nullable: true })
  checklistChecked: number | null;

  @Column({ name: "checklist_total", type: "integer", nullable: true })
  checklistTotal: number | null;

  /** The row version the checklist was counted at: the figures are the row's only while it is its row version. */
  @Column({ name: "checklist_row_version", type: "integer", nullable: true })
  checklistRowVersion: number | null;
}
