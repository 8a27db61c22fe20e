import type {
  ChangeRecord,
  HeadRecord,
  ImportOutcome,
  RevisionRecord,
  TaskBundle,
  TaskExportPage,
  ListedTask,
} from "../plans/ports/records";
import { trimmedLengths } from "../text/unicode";
import { changeContentOf, changeContentValues } from "./devices/prefix-changes";
import { insertChange } from "./tables/changes";
import { headFromRow, insertHead, SELECT_HEAD } from "./tables/heads";
import { REVISION_CONTENT, REVISION_META_COLUMNS, revisionFromRow, revisionValues } from "./tables/revisions";
import { cellsOf, placeholders, type Query, type Row } from "./tables/row";
import {
  DELETE_TASK,
  INSERT_TASK,
  LISTED_TASK_COLUMNS,
  LISTED_TASK_FROM,
  listedTaskFromRow,
  SELECT_TASK,
  taskFromRow,
  taskValues,
} from "./tables/tasks";
import type { SqlDialect } from "./sql-dialect";
import type { WriteStatements } from "./transaction";

/**
 * Export and import of whole tasks (issue 46, docs/decisions/0011-task-export-import.md): the reads
 * of one export page and the rows of one import. Both run on a query or statements the caller holds
 * in one snapshot or one transaction (typeorm-plan-store.ts); nothing here opens one.
 */

const META = REVISION_META_COLUMNS.map((column) => `r.${column}`).join(", ");

// Revisions fetched at most per page (their sizes are read first to cut the page by size).
const PAGE_ROWS = 1_000;
// What a revision's fields besides its content, title and author name take in a message, at most.
const REVISION_OVERHEAD = 512;

/**
 * One export page (see PlanStore.exportPage), on a query that sees one snapshot. A revision counts
 * toward `maxBytes` with its content, title and author name in UTF-8 and a fixed overhead, and HEAD's
 * content is taken off the budget first, so that a page stays under the message limit whatever its
 * revisions' titles.
 */
export async function readExportPage(
  query: Query,
  sql: SqlDialect,
  taskId: string,
  afterNumber: number,
  maxBytes: number,
): Promise<TaskExportPage | null> {
  const [taskRow] = (await query(SELECT_TASK, [taskId])) as Row[];
  if (!taskRow) return null;
  const task = taskFromRow(cellsOf(taskRow, ""));
  const [headRow] = (await query(SELECT_HEAD, [taskId])) as Row[];
  const head = headRow ? headFromRow(cellsOf(headRow, "")) : null;
  const [countRow] = (await query("SELECT COUNT(*) AS n FROM task_plan_revisions WHERE task_id = ?", [
    taskId,
  ])) as Row[];
  const revisionCount = Number(countRow?.n ?? 0);
  // The next numbers and sizes, then as many of them as fit `maxBytes` (at least one) with content.
  const sizes = (await query(
    `SELECT revision_number, content_bytes + ${sql.byteLength("title")} + ${sql.byteLength("author_name")} AS size` +
      " FROM task_plan_revisions WHERE task_id = ? AND revision_number > ? ORDER BY revision_number LIMIT ?",
    [taskId, afterNumber, PAGE_ROWS],
  )) as Row[];
  const budget = maxBytes - (head?.contentBytes ?? 0);
  let bytes = 0;
  let last = afterNumber;
  let taken = 0;
  for (const row of sizes) {
    const size = Number(row.size) + REVISION_OVERHEAD;
    if (taken > 0 && bytes + size > budget) break;
    bytes += size;
    last = Number(row.revision_number);
    taken++;
  }
  const rows =
    taken === 0
      ? []
      : ((await query(
          `SELECT ${META}, ${REVISION_CONTENT} AS content FROM task_plan_revisions r` +
            " LEFT JOIN task_plans p ON p.task_id = r.task_id" +
            " WHERE r.task_id = ? AND r.revision_number > ? AND r.revision_number <= ? ORDER BY r.revision_number",
          [taskId, afterNumber, last],
        )) as Row[]);
  const revisions = rows.map((row) => revisionFromRow(cellsOf(row, "")));
  const more = taken < sizes.length || (sizes.length === PAGE_ROWS && taken === sizes.length);
  return { task, head, revisions, more, revisionCount };
}

// The stored task is read by pages of about this much content, the import yielding to the event
// loop between them: on SQLite a statement runs synchronously, and one statement reading a whole
// 64 MiB history held the loop for over a second (issue 54).
const READ_BYTES = 4 * 1024 * 1024;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The whole stored task (every page of its export), on a query of the import's transaction. */
export async function readBundle(query: Query, sql: SqlDialect, taskId: string): Promise<TaskBundle | null> {
  let page = await readExportPage(query, sql, taskId, 0, READ_BYTES);
  if (page === null) return null;
  const { task, head } = page;
  const revisions: RevisionRecord[] = [...page.revisions];
  while (page.more) {
    await yieldToLoop();
    const after = revisions[revisions.length - 1]?.number ?? 0;
    page = await readExportPage(query, sql, taskId, after, READ_BYTES);
    if (page === null) break;
    revisions.push(...page.revisions);
  }
  return { task, head, revisions };
}

/** Tasks in id order (PlanStore.listTasks). */
export async function listTasks(
  query: Query,
  workspaces: ReadonlySet<string> | "all",
  workspaceId: string | null,
  afterId: string,
  limit: number,
): Promise<ListedTask[]> {
  if (workspaces !== "all" && workspaces.size === 0) return [];
  const conditions = ["t.id > ?"];
  const parameters: unknown[] = [afterId];
  if (workspaceId !== null) {
    conditions.push("t.workspace_id = ?");
    parameters.push(workspaceId);
  }
  if (workspaces !== "all") {
    conditions.push(`t.workspace_id IN (${placeholders(workspaces.size)})`);
    parameters.push(...workspaces);
  }
  const rows = (await query(
    `SELECT ${LISTED_TASK_COLUMNS} FROM ${LISTED_TASK_FROM} WHERE ${conditions.join(" AND ")}` +
      " ORDER BY t.id LIMIT ?",
    [...parameters, limit],
  )) as Row[];
  return rows.map((row) => listedTaskFromRow(cellsOf(row, "")));
}

// Revisions per INSERT: one statement carries at most about this much content, so that no packet
// approaches max_allowed_packet however large the task's history.
const INSERT_BYTES = 1024 * 1024;

const INSERT_REVISIONS = `INSERT INTO task_plan_revisions (${REVISION_META_COLUMNS.join(", ")}, content_at_head, content) VALUES `;
const REVISION_ROW = `(${placeholders(REVISION_META_COLUMNS.length + 2)})`;

/** What an import asks of the stored task, and what it records when it writes (PlanStore.importTask). */
export interface ImportJudge {
  readonly decide: (stored: TaskBundle | null) => Promise<ImportOutcome>;
  readonly change: () => ChangeRecord | null;
}

/**
 * The import's work in its write transaction: locks the task's row (MySQL: FOR UPDATE; SQLite runs
 * one transaction at a time), reads the stored task whole, decides, and writes. A task that is
 * replaced loses every row first (change history and remembered requests included), as DeleteTask;
 * the written task's change history starts with the `imported` change (`judge.change`), a copy of
 * HEAD's content as any other change row's, counted with the history figures kept with HEAD (for a
 * task without a plan, a row without content).
 */
export async function importInTransaction(
  statements: WriteStatements,
  sql: SqlDialect,
  lockSuffix: string,
  bundle: TaskBundle,
  judge: ImportJudge,
  dryRun: boolean,
): Promise<{ outcome: ImportOutcome; change: ChangeRecord | null }> {
  const { send } = statements;
  const query: Query = async (sql, parameters) => (await send(sql, parameters)).rows;
  const taskId = bundle.task.id;
  await send(`SELECT id FROM tasks WHERE id = ?${lockSuffix}`, [taskId]);
  const stored = await readBundle(query, sql, taskId);
  const outcome = await judge.decide(stored);
  if (outcome === "unchanged" || dryRun) return { outcome, change: null };
  if (stored !== null)
    for (const table of ["task_plan_changes", "write_requests", "task_plan_revisions", "task_plans"])
      await send(`DELETE FROM ${table} WHERE task_id = ?`, [taskId]);
  if (stored !== null) await send(DELETE_TASK, [taskId]);
  await send(INSERT_TASK, taskValues(bundle.task));
  const change = judge.change();
  if (bundle.head !== null) insertImportedHead(statements, bundle.head, bundle.revisions, change);
  let batch: unknown[] = [];
  let rows = 0;
  let bytes = 0;
  const flush = async () => {
    if (rows === 0) return;
    await send(INSERT_REVISIONS + Array.from({ length: rows }, () => REVISION_ROW).join(", "), batch);
    batch = [];
    rows = 0;
    bytes = 0;
    await yieldToLoop();
  };
  for (const revision of bundle.revisions) {
    if (rows > 0 && bytes + revision.contentBytes > INSERT_BYTES) await flush();
    batch.push(...revisionValues(revision), 0, revision.content);
    rows++;
    bytes += revision.contentBytes;
  }
  await flush();
  if (change !== null) {
    // A task imported without a plan records its change too (no content: there is none).
    const content =
      bundle.head === null
        ? ({ form: "none" } as const)
        : changeContentOf({ ...bundle.head, content: bundle.head.content });
    insertChange(statements, change, changeContentValues(change, content));
  }
  return { outcome, change };
}

// HEAD as exported, its history figures those of the imported rows (its revisions and the change
// row of the import), stamped with its version (devices/history-usage.ts).
function insertImportedHead(
  statements: WriteStatements,
  head: HeadRecord,
  revisions: readonly RevisionRecord[],
  change: ChangeRecord | null,
): void {
  const changeBytes = change === null || head.deleted ? 0 : head.contentBytes;
  const history = {
    revisions: revisions.length,
    bytes: revisions.reduce((sum, revision) => sum + revision.contentBytes, 0) + changeBytes,
  };
  insertHead(statements, { ...head, ...trimmedLengths(head.content) }, history);
}
