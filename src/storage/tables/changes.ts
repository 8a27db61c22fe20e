import {
  type ChangeKey,
  type ChangeRecord,
  isChangeKind,
  type StoredChange,
} from "../../plans/ports/records";
import { type PlanJson, planFromJson, planToJson } from "../../plans/ports/plan-json";
import type { SqlDialect } from "../sql-dialect";
import type { WriteStatements } from "../transaction";
import { type Cell, date, isNull, num, placeholders, str, strOrNull } from "./row";

/**
 * The change history table (`task_plan_changes`, what WatchPlan streams): one row per committed
 * change, keyed (task_id, version, step); the key fences a change recorded twice. Its columns, its
 * row codec and its statements. How a row holds the plan content after its change is the prefix
 * change rows device's (devices/prefix-changes.ts): a copy (`content`), nothing, or an append's kept
 * prefix and tail (`content_kept_chars`, `content_tail`); `stored_bytes` is what the row adds to its
 * task's history (devices/history-usage.ts).
 */

/** Every column but the content's, in the order changeValues gives their values. */
export const CHANGE_COLUMNS = [
  "task_id",
  "version",
  "step",
  "kind",
  "committed_at",
  "plan",
  "revision_id",
  "revision_number",
  "revision_coalesced",
  "author_kind",
  "author_name",
] as const;

/** The columns of an append's content held as a prefix of the next change's. */
export const PREFIX_COLUMNS = ["content_kept_chars", "content_tail"] as const;

/** The values of CHANGE_COLUMNS, in order. */
export function changeValues(change: ChangeRecord): unknown[] {
  return [
    change.taskId,
    change.version,
    change.step,
    change.kind,
    change.committedAt.getTime(),
    JSON.stringify(planToJson(change.plan)),
    change.revision?.id ?? null,
    change.revision?.number ?? null,
    change.revision === null ? null : change.revision.coalesced ? 1 : 0,
    change.author.kind,
    change.author.name,
  ];
}

/** A stored change; `content` is null unless the read selected it (or could not derive it). */
export function changeFromRow(cell: Cell): StoredChange {
  const kind = str(cell("kind"));
  if (!isChangeKind(kind)) throw new Error(`unknown change kind ${kind}`);
  const revisionId = cell("revision_id");
  return {
    taskId: str(cell("task_id")),
    version: num(cell("version")),
    step: num(cell("step")) === 1 ? 1 : 0,
    kind,
    committedAt: date(cell("committed_at")),
    plan: planFromJson(JSON.parse(str(cell("plan"))) as PlanJson),
    revision: isNull(revisionId)
      ? null
      : {
          id: String(revisionId),
          number: num(cell("revision_number")),
          coalesced: num(cell("revision_coalesced")) === 1,
        },
    author: { kind: str(cell("author_kind")) === "user" ? "user" : "agent", name: str(cell("author_name")) },
    content: strOrNull(cell("content")),
  };
}

/** A change row's key. */
export function changeKeyFromRow(cell: Cell): ChangeKey {
  return { version: num(cell("version")), step: num(cell("step")) === 1 ? 1 : 0 };
}

/** Change rows after a key (bound as afterKey gives it). */
export const AFTER_KEY = "(version > ? OR (version = ? AND step > ?))";
export const afterKey = (key: ChangeKey): number[] => [key.version, key.version, key.step];

/**
 * The plan text a change row stores: recorded, or measured in rows written before it was recorded
 * (or by a replica of an older release).
 */
export function changeStoredBytesSql(sql: SqlDialect): string {
  const { byteLength } = sql;
  return `COALESCE(stored_bytes, COALESCE(${byteLength("content")}, 0) + COALESCE(${byteLength("content_tail")}, 0))`;
}

/** How a recorded change row holds its content: SQL values for `content` and `stored_bytes`, with their parameters. */
export interface ChangeContentValues {
  readonly content: string;
  readonly storedBytes: string;
  readonly parameters: {
    readonly content: unknown[];
    readonly prefix: unknown[];
    readonly storedBytes: unknown[];
  };
}

const INSERT_CHANGE =
  `INSERT INTO task_plan_changes (${CHANGE_COLUMNS.join(", ")}, content, ${PREFIX_COLUMNS.join(", ")}, stored_bytes)` +
  ` VALUES (${placeholders(CHANGE_COLUMNS.length)}`;

/** Records a change row (deferred); a key already taken fails the transaction (primary key). */
export function insertChange(
  statements: WriteStatements,
  change: ChangeRecord,
  values: ChangeContentValues,
): void {
  const { parameters } = values;
  statements.defer(`${INSERT_CHANGE}, ${values.content}, ?, ?, ${values.storedBytes})`, [
    ...changeValues(change),
    ...parameters.content,
    ...parameters.prefix,
    ...parameters.storedBytes,
  ]);
}

/** A page of a task's changes after a key, in key order: with their content columns, or without. */
export function selectChangePage(withContent: boolean): string {
  const content = withContent ? `content, ${PREFIX_COLUMNS.join(", ")}` : "NULL AS content";
  return (
    `SELECT ${CHANGE_COLUMNS.join(", ")}, ${content} FROM task_plan_changes` +
    ` WHERE task_id = ? AND ${AFTER_KEY} ORDER BY version, step LIMIT ?`
  );
}

/** The newest changes of a task after a version, newest first, without content (bound: task, version, limit). */
export const SELECT_NEWEST_CHANGES_AFTER =
  `SELECT ${CHANGE_COLUMNS.join(", ")}, NULL AS content FROM task_plan_changes` +
  " WHERE task_id = ? AND version > ? ORDER BY version DESC, step DESC LIMIT ?";

export const SELECT_OLDEST_CHANGE_VERSION =
  "SELECT MIN(version) AS oldest FROM task_plan_changes WHERE task_id = ?";

/**
 * Each of `count` tasks' newest change key, as version * 2 + step (which orders keys as
 * compareChangeKeys does): the last entry of the task's primary key range, one index probe per task
 * whatever its retained history (a MAX over an expression would read all of it).
 */
export function selectNewestChangeKeys(count: number): string {
  return (
    "SELECT t.id AS task_id, (SELECT c.version * 2 + c.step FROM task_plan_changes c" +
    " WHERE c.task_id = t.id ORDER BY c.version DESC, c.step DESC LIMIT 1) AS newest FROM tasks t" +
    ` WHERE t.id IN (${placeholders(count)})`
  );
}

/** A newest key as selectNewestChangeKeys gives it. */
export function newestKeyOf(newest: number): ChangeKey {
  return { version: Math.floor(newest / 2), step: newest % 2 === 1 ? 1 : 0 };
}
