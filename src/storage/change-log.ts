import type { DataSource } from "typeorm";
import type { Dialect } from "./sql-dialect";
import type { ChangeKey, HeadRecord, StoredChange, VersionContent } from "../plans/ports/records";
import { contentAtVersion } from "./devices/content-at-version";
import { contentAfter, prefixFromRow, resolvePrefixes } from "./devices/prefix-changes";
import {
  afterKey,
  changeFromRow,
  newestKeyOf,
  SELECT_NEWEST_CHANGES_AFTER,
  SELECT_OLDEST_CHANGE_VERSION,
  selectChangePage,
  selectNewestChangeKeys,
} from "./tables/changes";
import { headFromRow, SELECT_HEAD } from "./tables/heads";
import { cellsOf, type Query, type Row } from "./tables/row";

/**
 * The change history outside write transactions: what WatchPlan reads (pages, resume points, the
 * poll's newest keys). What the background pruner deletes is change-pruning.ts's.
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
    const page = async (query: Query) =>
      ((await query(selectChangePage(withContent), [taskId, ...afterKey(after), limit])) as Row[]).map(
        (row) => cellsOf(row, ""),
      );
    return this.guard(async () => {
      if (!withContent) return (await page(this.query)).map(changeFromRow);
      // An append's row holds its content as a prefix of the next one's: the page and what it is
      // derived from (the next copy, or HEAD) are read in one snapshot.
      return this.consistentRead(async (query) => {
        const rows = (await page(query)).map((cell) => ({
          change: changeFromRow(cell),
          prefix: prefixFromRow(cell),
        }));
        const last = rows.at(-1);
        const next =
          last?.prefix && last.change.content === null ? await contentAfter(query, last.change) : null;
        return resolvePrefixes(rows, next);
      });
    });
  }

  /**
   * GetPlanChanges' read, in one snapshot: HEAD, the content at `sinceVersion` (none is read when it
   * is HEAD's version), and the newest `limit` changes after it (one more is read to tell `more`).
   */
  readPlanChanges(
    taskId: string,
    sinceVersion: number,
    limit: number,
  ): Promise<{ head: HeadRecord | null; since: VersionContent; changes: StoredChange[]; more: boolean }> {
    return this.guard(() =>
      this.consistentRead(async (query) => {
        const [headRow] = (await query(SELECT_HEAD, [taskId])) as Row[];
        const head = headRow ? headFromRow(cellsOf(headRow, "")) : null;
        const since = await contentAtVersion(query, taskId, sinceVersion, head);
        const rows = (await query(SELECT_NEWEST_CHANGES_AFTER, [taskId, sinceVersion, limit + 1])) as Row[];
        const changes = rows.slice(0, limit).map((row) => changeFromRow(cellsOf(row, "")));
        return { head, since, changes: changes.reverse(), more: rows.length > limit };
      }),
    );
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
      const rows = (await this.query(SELECT_OLDEST_CHANGE_VERSION, [taskId])) as {
        oldest: number | string | null;
      }[];
      const oldest = rows[0]?.oldest;
      return oldest === null || oldest === undefined ? null : Number(oldest);
    });
  }

  watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>> {
    return this.guard(async () => {
      const states = new Map<string, ChangeKey | null>();
      for (let i = 0; i < taskIds.length; i += 500) {
        const slice = taskIds.slice(i, i + 500);
        const rows = (await this.query(selectNewestChangeKeys(slice.length), slice)) as {
          task_id: string;
          newest: number | string | null;
        }[];
        for (const row of rows) {
          const newest = row.newest === null ? null : Number(row.newest);
          states.set(row.task_id, newest === null ? null : newestKeyOf(newest));
        }
      }
      return states;
    });
  }
}
