import type { Dialect } from "./data-source";
import type { PlanWriteTx, WriteReads } from "../plans/ports/plan-store";
import type { ReadKind } from "../plans/ports/records";
import { ChangeWrites } from "./change-writes";
import { HeadWrites } from "./head-writes";
import { keptHistoryOf, lockedStateFromRow, type LockedRow } from "./locked-state";
import { SqlLockedWrite, type TableWrites } from "./locked-write";
import { RevisionWrites } from "./revision-writes";
import { revisionWithContent } from "./revision-rows";
import { type SqlDialect, sqlDialect } from "./sql-dialect";
import { WriteRequests } from "./write-requests";
import type { WriteStatements } from "./write-statements";

/**
 * One write transaction. On MySQL its first read locks the task, HEAD and newest revision rows; it
 * hands back the task as locked, whose commit (locked-write.ts) turns the decision into rows. Every
 * statement is hand-written SQL sent on the transaction's connection (unit-of-work.ts).
 */
export class SqlWriteTx implements PlanWriteTx {
  private readonly sql: SqlDialect;
  // The statements on each table, which storage's own tests also drive one by one.
  readonly tables: TableWrites;

  constructor(statements: WriteStatements, dialect: Dialect, contentAtHead: boolean) {
    this.sql = sqlDialect(dialect);
    this.tables = {
      statements,
      heads: new HeadWrites(statements, this.sql),
      revisions: new RevisionWrites(statements, contentAtHead),
      changes: new ChangeWrites(statements, this.sql),
      requests: new WriteRequests(statements),
    };
  }

  private get send() {
    return this.tables.statements.send;
  }

  async read<K extends ReadKind>(taskId: string, what: WriteReads<K>): Promise<SqlLockedWrite<K> | null> {
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
    const history = kept === "recount" ? await this.tables.changes.countHistory(taskId) : kept;
    const remembered =
      what.requestId === undefined ? null : await this.tables.requests.find(taskId, what.requestId);
    // The target is read under the lock, so it is the row as of this write.
    const target =
      what.revisionId === undefined ? null : await revisionWithContent(this.query, taskId, what.revisionId);
    const state = lockedStateFromRow(row, what.reads, history, target, remembered);
    return new SqlLockedWrite(this.tables, state);
  }

  // The transaction's statements as a revision read sends them.
  private readonly query = async (sql: string, parameters: unknown[]) =>
    (await this.send(sql, parameters)).rows;
}
