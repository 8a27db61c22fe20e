import { Column, Entity, PrimaryColumn } from "typeorm";
import type {
  HeadMeta,
  HeadRecord,
  HeadWrite,
  HistoryUsage,
  LockedHead,
  ReadKind,
  StoredChecklist,
} from "../../plans/ports/records";
import { trimmedLengths } from "../../text/unicode";
import type { SqlDialect } from "../sql-dialect";
import type { WriteStatements } from "../transaction";
import type { Send } from "../write-connection";
import {
  type Cell,
  authorKindOf,
  date,
  dateOrNull,
  flag,
  num,
  numOrNull,
  placeholders,
  str,
  strOrNull,
  checkedContent,
  verifySize,
  stampedChecklist,
} from "./row";

/**
 * The HEAD table (`task_plans`): one row per task that ever had a plan, a tombstone once deleted.
 * Its columns, its row codec (the locking read, the plain reads and the writes all use it), and its
 * statements. Times are epoch milliseconds and flags 0/1, as PlanEntity (below) declares them.
 * The history columns are the history usage device's (devices/history-usage.ts): HEAD only stores
 * the figures it is given.
 */

/** Every column but the content, in the order headValues gives their values. */
export const HEAD_META_COLUMNS = [
  "task_id",
  "title",
  "content_bytes",
  "content_chars",
  "content_trimmed_chars",
  "content_trimmed_bytes",
  "version",
  "created_by",
  "created_at",
  "updated_at",
  "latest_revision_number",
  "deleted",
  "implementation_started_at",
  "implementation_started_by",
  "implementation_started_session_id",
  "history_revisions",
  "history_bytes",
  "history_version",
  "checklist_checked",
  "checklist_total",
  "checklist_open_end",
  "checklist_version",
] as const;

// One HEAD row as a literal (no spread: V8 builds a spread object many times slower, on every write).
function headOf<C, T>(cell: Cell, content: C, trimmedChars: T, trimmedBytes: T) {
  return {
    taskId: str(cell("task_id")),
    title: str(cell("title")),
    content,
    contentBytes: num(cell("content_bytes")),
    contentChars: num(cell("content_chars")),
    trimmedChars,
    trimmedBytes,
    version: num(cell("version")),
    createdBy: authorKindOf(cell("created_by")),
    createdAt: date(cell("created_at")),
    updatedAt: date(cell("updated_at")),
    latestRevisionNumber: num(cell("latest_revision_number")),
    deleted: flag(cell("deleted")),
    implementationStartedAt: dateOrNull(cell("implementation_started_at")),
    implementationStartedBy: strOrNull(cell("implementation_started_by")),
    implementationStartedSessionId: strOrNull(cell("implementation_started_session_id")),
    checklist: checklistOf(cell),
  };
}

// The stored checklist, as counted at HEAD's version (row.ts stampedChecklist).
function checklistOf(cell: Cell): StoredChecklist | null {
  const progress = stampedChecklist(cell, "checklist_version", "version");
  return progress && { ...progress, openEnd: flag(cell("checklist_open_end")) };
}

// The row's content (when the read selected it), checked against its recorded size.
const contentOfHead = (cell: Cell) =>
  checkedContent(cell, num(cell("content_bytes")), { taskId: str(cell("task_id")), row: "plan" });

/** A HEAD row with its content; throws StorageCorruptionError when the content is not its recorded size. */
export function headFromRow(cell: Cell): HeadRecord {
  const trimmed = [numOrNull(cell("content_trimmed_chars")), numOrNull(cell("content_trimmed_bytes"))];
  return headOf(cell, contentOfHead(cell) ?? "", trimmed[0] ?? null, trimmed[1] ?? null);
}

/**
 * HEAD as a write's locking read found it: with its content when it read it (checked against its
 * recorded size), and the trimmed lengths as recorded, or measured on the content of a row written
 * before they were recorded (which is then always read with it).
 */
export function lockedHeadFromRow<K extends ReadKind>(cell: Cell, reads: K): LockedHead<K> {
  const content = contentOfHead(cell);
  const chars = cell("content_trimmed_chars");
  const bytes = cell("content_trimmed_bytes");
  const { trimmedChars, trimmedBytes } =
    chars == null || bytes == null
      ? measuredTrim(content)
      : { trimmedChars: num(chars), trimmedBytes: num(bytes) };
  return headOf(
    cell,
    (reads === "content" ? content : null) as LockedHead<K>["content"],
    trimmedChars,
    trimmedBytes,
  );
}

function measuredTrim(content: string | null): { trimmedChars: number; trimmedBytes: number } {
  if (content === null) throw new Error("a HEAD row without trimmed lengths was read without its content");
  return trimmedLengths(content);
}

/** Whether a row read without its content must be read again with it (no trimmed lengths recorded). */
export function needsContentToCompose(cell: Cell): boolean {
  return cell("task_id") != null && cell("content_trimmed_chars") == null && cell("content") == null;
}

export const SELECT_HEAD = `SELECT ${HEAD_META_COLUMNS.join(", ")}, content FROM task_plans WHERE task_id = ?`;
export const SELECT_HEAD_CONTENT = "SELECT content FROM task_plans WHERE task_id = ?";

/**
 * The HEAD content the transaction wrote, as a subquery bound to the task id, so that the database
 * copies it into a revision or change row and the plan crosses the wire at most once per write
 * (never, for an append).
 */
export const HEAD_CONTENT = "(SELECT h.content FROM task_plans h WHERE h.task_id = ?)";
/** Its recorded size. */
export const HEAD_CONTENT_BYTES = "(SELECT h.content_bytes FROM task_plans h WHERE h.task_id = ?)";

// The values of HEAD_META_COLUMNS but task_id, in order.
function headValues(head: HeadWrite, history: HistoryUsage): unknown[] {
  return [
    head.title,
    head.contentBytes,
    head.contentChars,
    head.trimmedChars ?? null,
    head.trimmedBytes ?? null,
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
    head.checklist?.checked ?? null,
    head.checklist?.total ?? null,
    head.checklist === null ? null : head.checklist.openEnd ? 1 : 0,
    head.checklist === null ? null : head.version,
  ];
}

const SET_META = HEAD_META_COLUMNS.slice(1)
  .map((column) => `${column} = ?`)
  .join(", ");

const INSERT_HEAD =
  `INSERT INTO task_plans (${HEAD_META_COLUMNS.join(", ")}, content)` +
  ` VALUES (${placeholders(HEAD_META_COLUMNS.length + 1)})`;

/** Inserts the first HEAD row of a task (whole content), keeping `history` with it (deferred). */
export function insertHead(statements: WriteStatements, head: HeadWrite, history: HistoryUsage): void {
  const { content } = head;
  if (typeof content !== "string") throw new Error("a new HEAD row needs its whole content");
  statements.defer(INSERT_HEAD, [head.taskId, ...headValues(head, history), content]);
}

/**
 * The fence: updates HEAD (keeping `history` with it) only where its version is still
 * `fenceVersion`; the write is refused (StorageConflictError) unless exactly one row changed
 * (deferred). An append's content is composed by the database, which also requires the stored text
 * to have its recorded size (StorageCorruptionError when it has not: an append composes on a stored
 * text it never read, and is not made to a truncated or altered one).
 */
export function updateHead(
  statements: WriteStatements,
  sql: SqlDialect,
  head: HeadWrite,
  fenceVersion: number,
  history: HistoryUsage,
): void {
  const { content, taskId } = head;
  const whole = typeof content === "string";
  const values = headValues(head, history);
  if (whole) values.push(content);
  else values.push(sql.keptLength(content), content.suffix);
  values.push(taskId, fenceVersion);
  statements.defer(updateHeadSql(sql)[whole ? "whole" : "composed"], values, {
    lost: "plan version fence lost",
    check: whole ? undefined : (send) => verifyStoredContent(send, sql, taskId),
  });
}

// Built once per dialect: a statement built on every append is a new string the driver copies again.
const UPDATE_HEAD_SQL = new WeakMap<SqlDialect, { readonly whole: string; readonly composed: string }>();

function updateHeadSql(sql: SqlDialect): { readonly whole: string; readonly composed: string } {
  let statements = UPDATE_HEAD_SQL.get(sql);
  if (!statements) {
    const update = (content: string, fence: string) =>
      `UPDATE task_plans SET ${SET_META}, content = ${content} WHERE task_id = ? AND version = ?${fence}`;
    statements = {
      whole: update("?", ""),
      composed: update(sql.keepPrefixThen("content"), ` AND ${sql.byteLength("content")} = content_bytes`),
    };
    UPDATE_HEAD_SQL.set(sql, statements);
  }
  return statements;
}

/**
 * The first implementation-started mark: HEAD's mark, time and history usage, fenced on its version
 * and on the plan being unmarked (first mark wins); content, title and version stay (deferred).
 */
export function markHead(statements: WriteStatements, head: HeadMeta, history: HistoryUsage): void {
  statements.defer(
    "UPDATE task_plans SET implementation_started_at = ?, implementation_started_by = ?," +
      " implementation_started_session_id = ?, updated_at = ?, history_revisions = ?, history_bytes = ?," +
      " history_version = ? WHERE task_id = ? AND version = ? AND implementation_started_at IS NULL",
    [
      head.implementationStartedAt?.getTime() ?? null,
      head.implementationStartedBy,
      head.implementationStartedSessionId,
      head.updatedAt.getTime(),
      history.revisions,
      history.bytes,
      head.version,
      head.taskId,
      head.version,
    ],
    { lost: "plan version or implementation-started fence lost" },
  );
}

/** Throws StorageCorruptionError when the stored text's size is not its recorded one (the database measures it). */
export async function verifyStoredContent(send: Send, sql: SqlDialect, taskId: string): Promise<void> {
  const { rows } = await send(
    `SELECT content_bytes, ${sql.byteLength("content")} AS stored FROM task_plans WHERE task_id = ?`,
    [taskId],
  );
  const row = rows[0] as { content_bytes: number | string; stored: number | string } | undefined;
  if (row) verifySize(Number(row.stored), Number(row.content_bytes), { taskId, row: "plan" });
}

// The table as TypeORM declares it: the schema the migrations must leave
// (test/integration/storage/migration-replay.test.ts compares them). Never used to read or write
// rows: the codec above does.
/** Row of `task_plans`: the HEAD of a task's plan (a tombstone once deleted). */
@Entity({ name: "task_plans" })
export class PlanEntity {
  @PrimaryColumn({ name: "task_id", type: "varchar", length: 128 })
  taskId: string;

  @Column({ type: "varchar", length: 1000 })
  title: string;

  @Column({ type: "text" })
  content: string;

  @Column({ name: "content_bytes", type: "integer" })
  contentBytes: number;

  @Column({ name: "content_chars", type: "integer" })
  contentChars: number;

  /** Code points of the content without its trailing whitespace (null: written before it was recorded). */
  @Column({ name: "content_trimmed_chars", type: "integer", nullable: true })
  trimmedChars: number | null;

  /** UTF-8 bytes of the content without its trailing whitespace. */
  @Column({ name: "content_trimmed_bytes", type: "integer", nullable: true })
  trimmedBytes: number | null;

  @Column({ type: "bigint" })
  version: number;

  @Column({ name: "created_by", type: "varchar", length: 16 })
  createdBy: string;

  @Column({ name: "created_at", type: "bigint" })
  createdAt: number;

  @Column({ name: "updated_at", type: "bigint" })
  updatedAt: number;

  @Column({ name: "latest_revision_number", type: "integer" })
  latestRevisionNumber: number;

  @Column({ type: "integer" })
  deleted: boolean;

  @Column({ name: "implementation_started_at", type: "bigint", nullable: true })
  implementationStartedAt: number | null;

  @Column({ name: "implementation_started_by", type: "varchar", length: 1000, nullable: true })
  implementationStartedBy: string | null;

  @Column({ name: "implementation_started_session_id", type: "varchar", length: 128, nullable: true })
  implementationStartedSessionId: string | null;

  /**
   * The task's history usage (revisions, and bytes of every stored copy of plan text), kept by every
   * write in its transaction; trusted only while `historyVersion` is HEAD's version (null: not kept).
   */
  @Column({ name: "history_revisions", type: "integer", nullable: true })
  historyRevisions?: number | null;

  @Column({ name: "history_bytes", type: "bigint", nullable: true })
  historyBytes?: number | null;

  @Column({ name: "history_version", type: "bigint", nullable: true })
  historyVersion?: number | null;

  /**
   * The content's checklist progress, counted when it was written (null: written before it was):
   * items ticked, items, and whether the content ends open (an append then counts its result whole).
   */
  @Column({ name: "checklist_checked", type: "integer", nullable: true })
  checklistChecked?: number | null;

  @Column({ name: "checklist_total", type: "integer", nullable: true })
  checklistTotal?: number | null;

  @Column({ name: "checklist_open_end", type: "integer", nullable: true })
  checklistOpenEnd?: number | null;

  /** The version the checklist was counted at: the figures are HEAD's only while it is HEAD's version. */
  @Column({ name: "checklist_version", type: "bigint", nullable: true })
  checklistVersion?: number | null;
}
