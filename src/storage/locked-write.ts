import type { LockedWrite, Remember } from "../plans/ports/plan-store";
import type { CommittedUsage, HistoryUsage, LockedState, PlanCommit, ReadKind } from "../plans/ports/records";
import { changeContentOf, changeStoredBytes } from "./change-content";
import type { ChangeWrites } from "./change-writes";
import type { HeadWrites } from "./head-writes";
import type { RevisionWrites } from "./revision-writes";
import type { WriteRequests } from "./write-requests";
import type { WriteStatements } from "./write-statements";

/** The statements on each table a write transaction sends (write-tx.ts). */
export interface TableWrites {
  readonly statements: WriteStatements;
  readonly heads: HeadWrites;
  readonly revisions: RevisionWrites;
  readonly changes: ChangeWrites;
  readonly requests: WriteRequests;
}

/**
 * A task as its write's locking read found it (write-tx.ts `read`), and the one commit fenced on
 * that read. `commit` turns a decision into rows: the order of the statements, the content held at
 * HEAD, the change row, the history usage kept with HEAD and when the change history yields to the
 * budget are decided here and nowhere else. Its rows are deferred (write-statements.ts): on MySQL
 * they reach the database with the transaction's COMMIT, in the order they were written here.
 */
export class SqlLockedWrite<K extends ReadKind> implements LockedWrite<K> {
  constructor(
    private readonly tables: TableWrites,
    readonly state: LockedState<K>,
  ) {}

  private get taskId(): string {
    return this.state.task.id;
  }

  verifyStoredContent(): Promise<void> {
    return this.tables.heads.verifyStoredContent(this.taskId);
  }

  async commit(commit: PlanCommit, remember: Remember | null): Promise<CommittedUsage> {
    const committed = commit.kind === "delete-task" ? this.deleteTask() : await this.commitRows(commit);
    if (remember !== null) this.tables.requests.remember(remember.request, remember.forgetBefore);
    return committed;
  }

  // The rows of a decision, in the order its devices need: change rows that derive from the content
  // being replaced are materialized first, the change history yields to a content write's allowance
  // (so HEAD keeps the figures after it), the newest revision takes its own copy of HEAD's content
  // before HEAD moves, and the change row (which may copy the new HEAD) comes last.
  private async commitRows(commit: Exclude<PlanCommit, { kind: "delete-task" }>): Promise<CommittedUsage> {
    const { heads, revisions: revisionRows, changes } = this.tables;
    const { head, change } = commit;
    const { taskId } = head;
    const content = changeContentOf(head);
    const { revisions } = this.state.history;
    const { bytes } = this.state.history;
    // A write other than an append replaces the content older change rows may be derived from.
    const prior = this.state.head !== null && !this.state.head.deleted ? this.state.head : null;
    const materialized =
      prior !== null && content.form !== "prefix"
        ? (await changes.materializeChanges(taskId, prior.version)) * prior.contentBytes
        : 0;
    // What the write's own rows add: its change row, and a new revision or the newest one rewritten.
    const own = { revisions: 0, bytes: changeStoredBytes(content, head) };
    if (commit.kind === "content") {
      own.revisions = commit.coalesces === null ? 1 : 0;
      own.bytes += commit.revision.contentBytes - (commit.coalesces?.contentBytes ?? 0);
    }
    let usage: HistoryUsage = {
      revisions: revisions + own.revisions,
      bytes: bytes + materialized + own.bytes,
    };
    if (commit.kind === "content")
      usage = await changes.fitToAllowance(taskId, commit.allowance, change.version, usage, own);
    // The tombstone holds no content, and a new revision moves HEAD past the newest one (numbered
    // just below it), which may hold its content as HEAD's: that revision takes its own copy first.
    if (commit.kind === "delete") revisionRows.detachContent(taskId, head.latestRevisionNumber);
    else if (commit.coalesces === null && commit.fenceVersion !== null)
      revisionRows.detachContent(taskId, commit.revision.number - 1);
    if (commit.fenceVersion === null) heads.insert(head, usage);
    else heads.update(head, commit.fenceVersion, usage);
    if (commit.kind === "content") {
      if (commit.coalesces === null) revisionRows.insert(commit.revision);
      else revisionRows.update(commit.revision, commit.coalesces.rowVersion);
    }
    changes.recordChange(change, content);
    // What this write stored, before the change history yielded: the caller's write budget.
    return { usage, storedBytes: Math.max(0, materialized + own.bytes) };
  }

  private deleteTask(): CommittedUsage {
    const { statements } = this.tables;
    const taskId = this.taskId;
    // Children first: the revisions and HEAD reference the task.
    for (const table of ["task_plan_changes", "write_requests", "task_plan_revisions", "task_plans"])
      statements.defer(`DELETE FROM ${table} WHERE task_id = ?`, [taskId]);
    statements.defer("DELETE FROM tasks WHERE id = ?", [taskId]);
    return { usage: { revisions: 0, bytes: 0 }, storedBytes: 0 };
  }
}
