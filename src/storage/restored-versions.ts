import type { DataSource, EntityManager } from "typeorm";
import type { Dialect } from "./sql-dialect";
import { HEAD_META_COLUMNS } from "./tables/heads";
import { sendStatement } from "./transaction";

/** Tasks fenced per transaction: a large database is never held in one huge transaction. */
export const RESTORE_FENCE_BATCH = 500;

/** The default margin: more writes than any one task has between a backup and the loss of its database. */
export const DEFAULT_VERSION_MARGIN = 1_000_000;

/** What a fence did. */
export interface RestoreFenceResult {
  readonly margin: number;
  /** HEAD rows (tombstones included) whose version moved by the margin. */
  readonly tasks: number;
  /** Tasks without a plan that were given a tombstone HEAD row at the margin. */
  readonly tombstones: number;
  /** Change rows (WatchPlan's history) deleted. */
  readonly changeRows: number;
  readonly batches: number;
  readonly milliseconds: number;
}

/** The fence cannot run on this database (nothing was changed). */
export class RestoreFenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreFenceError";
  }
}

/**
 * The restore fence, run once on a restored database before the service serves it (invariant 4:
 * versions are fencing tokens that never repeat for a task). A restored database is at its backup's
 * moment, so without it the next write of a plan restored at version v makes v+1 again, a number
 * clients of the lost timeline already saw with other content. In batches of RESTORE_FENCE_BATCH
 * tasks, each its own transaction holding its HEAD rows locked as a write would, it:
 * - moves every HEAD row's version (tombstones included) up by `margin`, past every version the lost
 *   timeline can have given, as long as no task had `margin` writes between the backup and the loss,
 *   and gives every task without a plan a tombstone at `margin` (its first plan starts above it);
 * - deletes the tasks' change rows, so a WatchPlan resume point or an `expected_version` of the lost
 *   timeline (below the new version, with no change retained after it) ends WATCH_HISTORY_EXPIRED /
 *   VERSION_MISMATCH, and no change row derives its content from a version it no longer follows
 *   (devices/prefix-changes.ts);
 * - clears the history usage kept with HEAD (devices/history-usage.ts: figures not stamped with
 *   HEAD's version are recounted by the task's next write under its lock), since its change rows
 *   no longer count.
 * Running it again adds another margin (harmless). Run it with the service stopped (on MySQL it
 * refuses while another connection uses the database): a write between two batches is fenced or
 * not depending on its task's batch.
 */
export async function fenceRestoredVersions(
  dataSource: DataSource,
  dialect: Dialect,
  margin: number,
  batch = RESTORE_FENCE_BATCH,
): Promise<RestoreFenceResult> {
  const started = Date.now();
  await refuseUnfenceable(dataSource, dialect, margin);
  const lock = dialect === "mysql" ? " FOR UPDATE" : "";
  let after = "";
  let tasks = 0;
  let changeRows = 0;
  let tombstones = 0;
  let batches = 0;
  for (;;) {
    const done = await dataSource.transaction(async (manager: EntityManager) => {
      const ids = (
        (await manager.query(`SELECT id FROM tasks WHERE id > ? ORDER BY id LIMIT ?${lock}`, [
          after,
          batch,
        ])) as { id: string }[]
      ).map((row) => row.id);
      if (ids.length === 0) return true;
      if (!manager.queryRunner) throw new Error("a fence batch runs on a query runner");
      const placeholders = ids.map(() => "?").join(", ");
      const inTasks = `task_id IN (${placeholders})`;
      const deleted = await sendStatement(
        manager.queryRunner,
        dialect,
        `DELETE FROM task_plan_changes WHERE ${inTasks}`,
        ids,
      );
      const moved = await sendStatement(
        manager.queryRunner,
        dialect,
        // The checklist, counted on the same content, moves with the version it was counted at.
        `UPDATE task_plans SET version = version + ?, checklist_version = checklist_version + ?,` +
          ` history_revisions = NULL, history_bytes = NULL, history_version = NULL WHERE ${inTasks}`,
        [margin, margin, ...ids],
      );
      // A task without a plan gets a tombstone at the margin: its first plan then starts above every
      // version the lost timeline may have given it (a tombstone is what a deleted plan leaves).
      const now = Date.now();
      const buried = await sendStatement(
        manager.queryRunner,
        dialect,
        `INSERT INTO task_plans (${HEAD_META_COLUMNS.join(", ")}, content)` +
          ` SELECT t.id, '', 0, 0, 0, 0, ?, 'agent', ?, ?, 0, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ''` +
          ` FROM tasks t LEFT JOIN task_plans p ON p.task_id = t.id` +
          ` WHERE t.id IN (${placeholders}) AND p.task_id IS NULL`,
        [margin, now, now, ...ids],
      );
      tasks += moved.affected;
      tombstones += buried.affected;
      changeRows += deleted.affected;
      batches++;
      after = ids[ids.length - 1] ?? after;
      return ids.length < batch;
    });
    if (done) break;
  }
  return { margin, tasks, tombstones, changeRows, batches, milliseconds: Date.now() - started };
}

// Nothing is changed on a database the fence cannot finish: one whose schema is not the service's
// (a backup of an older release is migrated first), one a replica still uses (MySQL: another
// connection to the database that the fence's user can see; an SQLite file's users are not
// visible), or one whose versions the margin would carry past what a version can hold exactly
// (2^53 - 1, the largest integer every client reads exactly).
async function refuseUnfenceable(dataSource: DataSource, dialect: Dialect, margin: number): Promise<void> {
  const applied = await dataSource
    .query("SELECT name FROM schema_migrations")
    .then((rows: { name: string }[]) => new Set(rows.map((row) => row.name)))
    .catch(() => {
      throw new RestoreFenceError("the database has no schema_migrations table: not a taskplans database");
    });
  if (dataSource.migrations.some((migration) => !applied.has(migration.name ?? migration.constructor.name)))
    throw new RestoreFenceError(
      "the database's schema has pending migrations: run node dist/src/bin/migrate.js first, then the fence",
    );
  if (dialect === "mysql") {
    const others = (await dataSource.query(
      "SELECT USER AS user, HOST AS host FROM information_schema.PROCESSLIST" +
        " WHERE DB = DATABASE() AND ID <> CONNECTION_ID() ORDER BY ID",
    )) as { user: string; host: string }[];
    if (others.length > 0)
      throw new RestoreFenceError(
        `${others.length} other connection(s) use the database (${others
          .slice(0, 5)
          .map((other) => `${other.user}@${other.host}`)
          .join(", ")}): stop every replica (scale the Deployment to 0) and run the fence again`,
      );
  }
  const [row] = (await dataSource.query("SELECT MAX(version) AS newest FROM task_plans")) as {
    newest: number | string | null;
  }[];
  const newest = Number(row?.newest ?? 0);
  if (newest + margin > Number.MAX_SAFE_INTEGER)
    throw new RestoreFenceError(
      `the newest version (${newest}) plus the margin (${margin}) exceeds ${Number.MAX_SAFE_INTEGER}: choose a smaller --version-margin`,
    );
}
