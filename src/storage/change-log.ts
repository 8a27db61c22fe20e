import type { DataSource } from "typeorm";
import type { Dialect } from "./data-source";
import type { ChangeKey, ChangeRecord, StoredChange } from "../plans/ports/records";
import {
  AFTER_KEY,
  afterKey,
  CHANGE_COLUMNS,
  changeFromRow,
  type ChangeRow,
  PREFIX_COLUMNS,
  prefixFromRow,
  resolvePrefixes,
} from "./change-rows";
import { pruneBatch } from "./change-pruning";
import type { Query } from "./revision-rows";

/**
 * The change history outside write transactions: what WatchPlan reads (pages, resume points, the
 * poll's newest keys) and what the background pruner deletes, one bounded batch at a time
 * (change-pruning.ts).
 * Every call runs through `guard` (the store's queue and error classification).
 */
export class ChangeLog {
  constructor(
    private readonly dataSource: DataSource,
    private readonly dialect: Dialect,
    private readonly guard: <T>(job: () => Promise<T>) => Promise<T>,
  ) {}

  readChanges(
    taskId: string,
    after: ChangeKey,
    limit: number,
    withContent: boolean,
  ): Promise<StoredChange[]> {
    const page = (query: Query) =>
      query(
        `SELECT ${withContent ? `${CHANGE_COLUMNS}, ${PREFIX_COLUMNS}` : CHANGE_COLUMNS.replace(", content", ", NULL AS content")}` +
          ` FROM task_plan_changes WHERE task_id = ? AND ${AFTER_KEY} ORDER BY version, step LIMIT ?`,
        [taskId, ...afterKey(after), limit],
      ) as Promise<ChangeRow[]>;
    return this.guard(async () => {
      if (!withContent) return (await page(this.query)).map(changeFromRow);
      // An append's row holds its content as a prefix of the next one's: the page and what it is
      // derived from (the next copy, or HEAD) are read in one snapshot.
      return this.consistentRead(async (query) => {
        const rows = (await page(query)).map((row) => ({
          change: changeFromRow(row),
          prefix: prefixFromRow(row),
        }));
        const last = rows.at(-1);
        const next =
          last?.prefix && last.change.content === null ? await this.contentAfter(query, last.change) : null;
        return resolvePrefixes(rows, next);
      });
    });
  }

  // The content of the change after `last` (a prefix row), if it may be derived from: the next row
  // not waiting for a copy, or else HEAD; with every version in between still recorded.
  private async contentAfter(query: Query, last: ChangeRecord): Promise<string | null> {
    const { taskId } = last;
    const [row] = (await query(
      `SELECT version, step, content, ${PREFIX_COLUMNS} FROM task_plan_changes WHERE task_id = ? AND ${AFTER_KEY}` +
        " AND (content IS NOT NULL OR content_kept_chars IS NULL) ORDER BY version, step LIMIT 1",
      [taskId, ...afterKey(last)],
    )) as ChangeRow[];
    let anchor: { version: number; content: string | null };
    if (row) {
      const key = { version: Number(row.version), step: Number(row.step) };
      if (key.step !== 1 && prefixFromRow(row) === null) return null;
      anchor = { version: key.version, content: row.content === null ? null : String(row.content) };
    } else {
      const [head] = (await query("SELECT version, content, deleted FROM task_plans WHERE task_id = ?", [
        taskId,
      ])) as ChangeRow[];
      if (!head || Number(head.deleted) !== 0) return null;
      anchor = { version: Number(head.version), content: String(head.content) };
    }
    const [between] = (await query(
      "SELECT COUNT(DISTINCT version) AS n FROM task_plan_changes WHERE task_id = ? AND version > ? AND version <= ?",
      [taskId, last.version, anchor.version],
    )) as ChangeRow[];
    return Number(between?.n) === anchor.version - last.version ? anchor.content : null;
  }

  // Reads that must see one state: a REPEATABLE READ snapshot on MySQL; on SQLite the store already
  // runs one job at a time.
  private consistentRead<T>(work: (query: Query) => Promise<T>): Promise<T> {
    if (this.dialect === "sqlite") return work(this.query);
    return this.dataSource.transaction("REPEATABLE READ", (manager) =>
      work((sql, parameters) => manager.query(sql, parameters)),
    );
  }

  private readonly query: Query = (sql, parameters) => this.dataSource.query(sql, parameters);

  oldestChangeVersion(taskId: string): Promise<number | null> {
    return this.guard(async () => {
      const rows = (await this.dataSource.query(
        "SELECT MIN(version) AS oldest FROM task_plan_changes WHERE task_id = ?",
        [taskId],
      )) as { oldest: number | string | null }[];
      const oldest = rows[0]?.oldest;
      return oldest === null || oldest === undefined ? null : Number(oldest);
    });
  }

  watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>> {
    return this.guard(async () => {
      const states = new Map<string, ChangeKey | null>();
      for (let i = 0; i < taskIds.length; i += 500) {
        const slice = taskIds.slice(i, i + 500);
        // version * 2 + step orders keys as compareChangeKeys does. Each task's newest key is the
        // last entry of its primary key range (task_id, version, step): one index probe per task,
        // whatever its retained history (a MAX over an expression would read all of it).
        const rows = (await this.dataSource.query(
          "SELECT t.id AS task_id, (SELECT c.version * 2 + c.step FROM task_plan_changes c" +
            " WHERE c.task_id = t.id ORDER BY c.version DESC, c.step DESC LIMIT 1) AS newest FROM tasks t" +
            ` WHERE t.id IN (${slice.map(() => "?").join(", ")})`,
          slice,
        )) as { task_id: string; newest: number | string | null }[];
        for (const row of rows) {
          const newest = row.newest === null ? null : Number(row.newest);
          states.set(
            row.task_id,
            newest === null ? null : { version: Math.floor(newest / 2), step: newest % 2 === 1 ? 1 : 0 },
          );
        }
      }
      return states;
    });
  }

  pruneChangesBefore(olderThan: Date, limit: number): Promise<number> {
    return this.guard(() => pruneBatch(this.dataSource, this.dialect, { olderThan }, limit));
  }

  pruneTaskChanges(taskId: string, upToVersion: number, limit: number): Promise<number> {
    return this.guard(() => pruneBatch(this.dataSource, this.dialect, { taskId, upToVersion }, limit));
  }
}
