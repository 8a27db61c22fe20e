import type { LockedWrite, PlanWriteTx, Remember, WriteReads } from "../plans/ports/plan-store";
import type { CommittedUsage, LockedState, PlanCommit, ReadKind } from "../plans/ports/records";
import { type Dialect, type SqlDialect, sqlDialect } from "./sql-dialect";
import { beforeHeadMoves, revisionContent } from "./devices/content-at-head";
import { contentAtVersion } from "./devices/content-at-version";
import { countHistory, fitToAllowance, keptHistoryOf, ownUsage } from "./devices/history-usage";
import { changeContentOf, changeContentValues, materializeChanges } from "./devices/prefix-changes";
import { insertChange } from "./tables/changes";
import {
  HEAD_META_COLUMNS,
  insertHead,
  lockedHeadFromRow,
  markHead,
  needsContentToCompose,
  SELECT_HEAD_CONTENT,
  updateHead,
  verifyStoredContent,
} from "./tables/heads";
import {
  insertRevision,
  lockedRevisionFromRow,
  REVISION_CONTENT,
  REVISION_META_COLUMNS,
  revisionWithContent,
  updateRevision,
} from "./tables/revisions";
import { cellsOf, type Query, type Row, selectList, verifySize } from "./tables/row";
import { DELETE_TASK, TASK_COLUMNS, taskFromRow } from "./tables/tasks";
import { findRequest, rememberRequest } from "./tables/write-requests";
import type { WriteStatements } from "./transaction";
import { utf8Length } from "../text/unicode";

/**
 * The locked task: a write transaction's locking read, and the order in which its decision becomes
 * rows. The read locks the task, HEAD and newest revision rows (MySQL: FOR UPDATE; SQLite runs one
 * transaction at a time) in one statement; the commit is fenced on what it read (HEAD's version, the
 * newest revision's row version, the change key). Every statement goes through the transaction's
 * WriteStatements (transaction.ts): the rows are deferred and reach the database with its COMMIT.
 */

/** The locking read: task (`t_`), HEAD (`p_`, with or without its content) and newest revision (`r_`). */
function lockingRead(withContent: boolean, lockSuffix: string): string {
  return (
    `SELECT ${selectList(TASK_COLUMNS, "t", "t_")}, ${selectList(HEAD_META_COLUMNS, "p", "p_")},` +
    // Without content the text is not touched at all (not even measured): an append's UPDATE checks
    // the stored size as it composes (tables/heads.ts updateHead).
    (withContent ? " p.content AS p_content," : " NULL AS p_content,") +
    ` ${selectList(REVISION_META_COLUMNS, "r", "r_")},` +
    (withContent ? ` ${REVISION_CONTENT} AS r_content` : " NULL AS r_content") +
    " FROM tasks t LEFT JOIN task_plans p ON p.task_id = t.id" +
    " LEFT JOIN task_plan_revisions r ON r.task_id = t.id AND r.revision_number = p.latest_revision_number" +
    ` WHERE t.id = ?${lockSuffix}`
  );
}

// InnoDB locks every row the locking read reads (task, HEAD, newest revision) until commit.
const LOCKING_READS: Record<Dialect, { readonly metadata: string; readonly content: string }> = {
  mysql: { metadata: lockingRead(false, " FOR UPDATE"), content: lockingRead(true, " FOR UPDATE") },
  sqlite: { metadata: lockingRead(false, ""), content: lockingRead(true, "") },
};

/** The locking read's statement, as a write of `dialect` reading `reads` sends it. */
export function lockingReadOf(dialect: Dialect, reads: ReadKind): string {
  return LOCKING_READS[dialect][reads];
}

/** One write transaction (PlanWriteTx): its locking read hands back the task as locked. */
export class SqlWriteTx implements PlanWriteTx {
  private readonly sql: SqlDialect;

  constructor(
    readonly statements: WriteStatements,
    private readonly dialect: Dialect,
    private readonly contentAtHead: boolean,
  ) {
    this.sql = sqlDialect(dialect);
  }

  async read<K extends ReadKind>(taskId: string, what: WriteReads<K>): Promise<SqlLockedWrite<K> | null> {
    const { send } = this.statements;
    const { rows } = await send(lockingReadOf(this.dialect, what.reads), [taskId]);
    const row = rows[0] as Row | undefined;
    if (!row) return null;
    const head = cellsOf(row, "p_");
    // A HEAD written before the trimmed lengths were recorded is read whole (under the lock just
    // taken) to measure them, so that an append composes on it like on any other.
    if (needsContentToCompose(head)) {
      const { rows: heads } = await send(SELECT_HEAD_CONTENT, [taskId]);
      row.p_content = (heads[0] as { content: string } | undefined)?.content ?? null;
    }
    const kept = keptHistoryOf(head);
    const history = kept === "recount" ? await countHistory(this.statements, this.sql, taskId) : kept;
    const remembered = what.requestId === undefined ? null : await findRequest(send, taskId, what.requestId);
    const query: Query = async (sql, parameters) => (await send(sql, parameters)).rows;
    // The target is read under the lock, so it is the row as of this write.
    const target =
      what.revisionId === undefined ? null : await revisionWithContent(query, taskId, what.revisionId);
    const hasHead = row.p_task_id != null;
    const lockedHead = hasHead ? lockedHeadFromRow(head, what.reads) : null;
    // A merge's base, derived under the lock from the change history (devices/content-at-version.ts).
    const atVersion =
      what.contentAt === undefined ? null : await contentAtVersion(query, taskId, what.contentAt, lockedHead);
    const state: LockedState<K> = {
      task: taskFromRow(cellsOf(row, "t_")),
      head: lockedHead,
      // HEAD points at the newest revision (both are written in every write's transaction).
      latest: hasHead && row.r_id != null ? lockedRevisionFromRow<K>(cellsOf(row, "r_")) : null,
      history,
      target,
      remembered,
      atVersion,
    };
    return new SqlLockedWrite(this.statements, this.sql, this.contentAtHead, state);
  }
}

/** A task as its write's locking read found it, and the one commit fenced on that read. */
export class SqlLockedWrite<K extends ReadKind> implements LockedWrite<K> {
  constructor(
    private readonly statements: WriteStatements,
    private readonly sql: SqlDialect,
    private readonly contentAtHead: boolean,
    readonly state: LockedState<K>,
  ) {}

  verifyStoredContent(): Promise<void> {
    return verifyStoredContent(this.statements.send, this.sql, this.state.task.id);
  }

  async storedContent(): Promise<string> {
    const head = this.state.head;
    if (head === null || head.deleted) return "";
    if (head.content !== null) return head.content;
    const { rows } = await this.statements.send(SELECT_HEAD_CONTENT, [this.state.task.id]);
    const content = (rows[0] as { content: string } | undefined)?.content ?? "";
    verifySize(utf8Length(content), head.contentBytes, { taskId: head.taskId, row: "plan" });
    return content;
  }

  async commit(commit: PlanCommit, remember: Remember | null): Promise<CommittedUsage> {
    const committed = commit.kind === "delete-task" ? this.deleteTask() : await this.commitRows(commit);
    if (remember !== null) rememberRequest(this.statements, remember.request, remember.forgetBefore);
    return committed;
  }

  /**
   * The rows of a decision, in the order its devices need (each device's ordering rule):
   * 1. prefix change rows: a write other than an append first turns the change rows derived from
   *    the content it replaces into copies;
   * 2. history usage: the figures after the write's own rows, the change history yielding to a
   *    content write's allowance;
   * 3. content at HEAD: the revision HEAD moves past takes its own copy of HEAD's content;
   * 4. HEAD, fenced on its version (with the figures of 2);
   * 5. the new or coalesced revision (which may copy the new HEAD);
   * 6. the change row (which may copy the new HEAD).
   */
  private async commitRows(commit: Exclude<PlanCommit, { kind: "delete-task" }>): Promise<CommittedUsage> {
    const { statements, sql } = this;
    const { head, change } = commit;
    const { taskId } = head;
    const content = changeContentOf(head);
    const prior = this.state.head !== null && !this.state.head.deleted ? this.state.head : null;
    const replaces = prior !== null && commit.kind !== "mark" && content.form !== "prefix";
    const materialized = replaces
      ? (await materializeChanges(statements.send, sql, taskId, prior.version)) * prior.contentBytes
      : 0;
    const own = ownUsage(commit, content);
    const before = this.state.history;
    let usage = {
      revisions: before.revisions + own.revisions,
      bytes: before.bytes + materialized + own.bytes,
    };
    if (commit.kind === "content")
      usage = await fitToAllowance(statements, sql, taskId, commit.allowance, change.version, usage, own);
    beforeHeadMoves(statements, commit);
    if (commit.kind === "mark") markHead(statements, head, usage);
    else if (commit.fenceVersion === null) insertHead(statements, head, usage);
    else updateHead(statements, sql, head, commit.fenceVersion, usage);
    if (commit.kind === "content") {
      const revisionAt = revisionContent(commit.revision, this.contentAtHead);
      if (commit.coalesces === null) insertRevision(statements, commit.revision, revisionAt);
      else updateRevision(statements, commit.revision, revisionAt, commit.coalesces.rowVersion);
    }
    insertChange(statements, change, changeContentValues(change, content));
    // What this write stored, before the change history yielded: the caller's write budget.
    return { usage, storedBytes: Math.max(0, materialized + own.bytes) };
  }

  private deleteTask(): CommittedUsage {
    const taskId = this.state.task.id;
    // Children first: the revisions and HEAD reference the task.
    for (const table of ["task_plan_changes", "write_requests", "task_plan_revisions", "task_plans"])
      this.statements.defer(`DELETE FROM ${table} WHERE task_id = ?`, [taskId]);
    this.statements.defer(DELETE_TASK, [taskId]);
    return { usage: { revisions: 0, bytes: 0 }, storedBytes: 0 };
  }
}
