import type { Dialect } from "./data-source";
import type { PlanWriteTx, Remember, WriteReads } from "../plans/ports/plan-store";
import type { HeadMeta, HistoryUsage, LockedState, PlanCommit, ReadKind } from "../plans/ports/records";
import { changeContentOf, changeStoredBytes } from "./change-content";
import { ChangeWrites } from "./change-writes";
import { HeadWrites } from "./head-writes";
import type { Send } from "./hot-statement";
import { keptHistoryOf, lockedStateFromRow, type LockedRow } from "./locked-state";
import { RevisionWrites } from "./revision-writes";
import { revisionWithContent } from "./revision-rows";
import { type SqlDialect, sqlDialect } from "./sql-dialect";
import { WriteRequests } from "./write-requests";

/** What the locking read found, for the commit that follows it. */
interface Locked {
  readonly taskId: string;
  readonly head: HeadMeta | null;
  history: HistoryUsage;
}

/**
 * One write transaction. On MySQL its first read locks the task, HEAD and newest revision rows.
 * `commit` turns a decision into rows: the order of the statements, the content held at HEAD, the
 * change row and the history usage kept with HEAD are decided here and nowhere else. Every statement
 * is hand-written SQL sent on the transaction's connection (unit-of-work.ts).
 */
export class SqlWriteTx implements PlanWriteTx {
  private readonly sql: SqlDialect;
  private locked: Locked | null = null;
  // The statements on each table, which storage's own tests also drive one by one.
  readonly heads: HeadWrites;
  readonly revisions: RevisionWrites;
  readonly changes: ChangeWrites;
  private readonly requests: WriteRequests;

  constructor(
    private readonly send: Send,
    dialect: Dialect,
    contentAtHead: boolean,
  ) {
    this.sql = sqlDialect(dialect);
    this.heads = new HeadWrites(send, this.sql);
    this.revisions = new RevisionWrites(send, contentAtHead);
    this.changes = new ChangeWrites(send, this.sql);
    this.requests = new WriteRequests(send);
  }

  async read<K extends ReadKind>(taskId: string, what: WriteReads<K>): Promise<LockedState<K> | null> {
    const { rows } = await this.send(this.sql.lockForWrite(what.reads === "content"), [taskId]);
    const row = rows[0] as LockedRow | undefined;
    if (!row) return null;
    // A HEAD written before the trimmed lengths were recorded is read whole (under the lock just
    // taken) to measure them, so that an append composes on it like on any other.
    if (row.p_task_id !== null && row.p_trimmed_chars === null && row.p_content === null) {
      const { rows: heads } = await this.send("SELECT content FROM task_plans WHERE task_id = ?", [taskId]);
      row.p_content = (heads[0] as { content: string } | undefined)?.content ?? null;
    }
    const kept = keptHistoryOf(row);
    const history = kept === "recount" ? await this.changes.countHistory(taskId) : kept;
    const remembered = what.requestId === undefined ? null : await this.requests.find(taskId, what.requestId);
    // The target is read under the lock, so it is the row as of this write.
    const target =
      what.revisionId === undefined ? null : await revisionWithContent(this.query, taskId, what.revisionId);
    const state = lockedStateFromRow(row, what.reads, history, target, remembered);
    this.locked = { taskId, head: state.head, history };
    return state;
  }

  verifyStoredContent(taskId: string): Promise<void> {
    return this.heads.verifyStoredContent(taskId);
  }

  async commit(commit: PlanCommit, remember: Remember | null): Promise<HistoryUsage> {
    const usage = await this.commitRows(commit);
    if (remember !== null) await this.requests.remember(remember.request, remember.forgetBefore);
    return usage;
  }

  // The rows of a decision, in the order its devices need (see the class comment).
  private async commitRows(commit: PlanCommit): Promise<HistoryUsage> {
    if (commit.kind === "delete-task") {
      await this.deleteTask(commit.taskId);
      return { revisions: 0, bytes: 0 };
    }
    const locked = this.lockedFor(commit.head.taskId);
    const { head, change } = commit;
    const content = changeContentOf(head);
    let { revisions, bytes } = locked.history;
    // A write other than an append replaces the content older change rows may be derived from.
    const prior = locked.head !== null && !locked.head.deleted ? locked.head : null;
    if (prior !== null && content.form !== "prefix")
      bytes += (await this.changes.materializeChanges(head.taskId, prior.version)) * prior.contentBytes;
    if (commit.kind === "delete") {
      // The tombstone holds no content: the newest revision takes its own copy first.
      await this.revisions.detachContent(head.taskId, head.latestRevisionNumber);
    } else if (commit.coalesces === null && commit.fenceVersion !== null) {
      // A new revision moves HEAD past the newest one (numbered just below it), which may hold its
      // content as HEAD's.
      await this.revisions.detachContent(head.taskId, commit.revision.number - 1);
    }
    if (commit.kind === "content") {
      const replaced = commit.coalesces?.contentBytes ?? 0;
      revisions += commit.coalesces === null ? 1 : 0;
      bytes += commit.revision.contentBytes - replaced;
    }
    bytes += changeStoredBytes(content, head);
    locked.history = { revisions, bytes };
    if (commit.fenceVersion === null) await this.heads.insert(head, locked.history);
    else await this.heads.update(head, commit.fenceVersion, locked.history);
    if (commit.kind === "content") {
      if (commit.coalesces === null) await this.revisions.insert(commit.revision);
      else await this.revisions.update(commit.revision, commit.coalesces.rowVersion);
    }
    await this.changes.recordChange(change, content);
    return locked.history;
  }

  async yieldChangeHistory(taskId: string, bytes: number, keepFromVersion: number): Promise<HistoryUsage> {
    const locked = this.lockedFor(taskId);
    const freed = await this.changes.trimChangeHistory(taskId, bytes, keepFromVersion);
    if (freed === 0) return locked.history;
    locked.history = { ...locked.history, bytes: locked.history.bytes - freed };
    await this.changes.keepHistory(taskId, locked.history);
    return locked.history;
  }

  async recountHistory(taskId: string): Promise<HistoryUsage> {
    const locked = this.lockedFor(taskId);
    locked.history = await this.changes.countHistory(taskId);
    await this.changes.keepHistory(taskId, locked.history);
    return locked.history;
  }

  // The commit follows the locking read of its task in the same transaction (the fence of every write).
  private lockedFor(taskId: string): Locked {
    if (this.locked?.taskId !== taskId) throw new Error("a write commits after the locking read of its task");
    return this.locked;
  }

  // The transaction's statements as a revision read sends them.
  private readonly query = async (sql: string, parameters: unknown[]) =>
    (await this.send(sql, parameters)).rows;

  private async deleteTask(taskId: string): Promise<void> {
    // Children first: the revisions and HEAD reference the task.
    await this.send("DELETE FROM task_plan_changes WHERE task_id = ?", [taskId]);
    await this.send("DELETE FROM write_requests WHERE task_id = ?", [taskId]);
    await this.send("DELETE FROM task_plan_revisions WHERE task_id = ?", [taskId]);
    await this.send("DELETE FROM task_plans WHERE task_id = ?", [taskId]);
    await this.send("DELETE FROM tasks WHERE id = ?", [taskId]);
  }
}
