import type { DataSource } from "typeorm";
import { sqliteConnection } from "./data-source";
import { type Dialect, type SqlDialect, sqlDialect } from "./sql-dialect";
import type { PlanStore } from "../plans/ports/plan-store";
import type {
  ChangeKey,
  ChangeRecord,
  HeadRecord,
  RevisionMeta,
  RevisionRecord,
  ImportOutcome,
  StoredChange,
  TaskBundle,
  TaskExportPage,
  ListedTask,
  TaskRecord,
} from "../plans/ports/records";
import { type ImportJudge, importInTransaction, listTasks, readExportPage } from "./task-transfer";
import { ChangeLog } from "./change-log";
import { pruneBatch } from "./change-pruning";
import { SqlWriteTx } from "./locked-task";
import { headFromRow, SELECT_HEAD } from "./tables/heads";
import { listRevisions, revisionWithContent } from "./tables/revisions";
import { cellsOf, type Query, type Row } from "./tables/row";
import {
  INSERT_TASK,
  listedTaskFromRow,
  SELECT_LISTED_TASK,
  SELECT_TASK,
  taskFromRow,
  taskValues,
} from "./tables/tasks";
import { historyQuery } from "./causal-reads";
import { noQueue, SerialQueue } from "./serial-queue";
import { classifyCommitFailure, classifyStorageError } from "./storage-errors";
import { type UnitOfWork, unitOfWork } from "./transaction";
import { type CheckpointObserver, type CheckpointSettings, WalCheckpointer } from "./wal-checkpointer";
import type { WriteConnectionOptions } from "./write-connection";

/** PlanStore over TypeORM, for SQLite (embedded default) and MySQL/MariaDB (production). */
export class TypeOrmPlanStore implements PlanStore {
  private readonly queue: { run<T>(job: () => Promise<T>): Promise<T> };

  private readonly contentAtHead: boolean;
  private readonly historyQuery: Query;
  private readonly sql: SqlDialect;
  private readonly transactions: UnitOfWork;
  private readonly changes: ChangeLog;
  private readonly checkpoints: WalCheckpointer | null;

  /**
   * `walCheckpoints`: on an SQLite file, checkpoint its write-ahead log on a worker thread instead
   * of in the commits on the event loop (wal-checkpointer.ts); `onFailure` hears when that stops
   * and the commits checkpoint again.
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly dialect: Dialect,
    options: {
      readonly revisionContentAtHead?: boolean;
      readonly walCheckpoints?: CheckpointObserver & { readonly settings: CheckpointSettings };
      /** MySQL: how long a write's transaction outlives a holder that stopped acting, and who hears of replaced connections. */
      readonly writeConnections?: WriteConnectionOptions;
      /**
       * Galera: the sessions wait for causality (causal-reads.ts); history pages opt out, as the
       * one read that need not see a revision committed through another node a moment ago.
       */
      readonly causalReads?: boolean;
    } = {},
  ) {
    this.queue = dialect === "sqlite" ? new SerialQueue() : noQueue;
    this.contentAtHead = options.revisionContentAtHead ?? false;
    this.historyQuery = historyQuery(this.query, options.causalReads ?? false);
    this.sql = sqlDialect(dialect);
    this.transactions = unitOfWork(dataSource, dialect, options.writeConnections);
    this.changes = new ChangeLog(dataSource, dialect, (job) => this.guard(job));
    const file = dataSource.options.database;
    this.checkpoints =
      dialect === "sqlite" && options.walCheckpoints && typeof file === "string" && file !== ":memory:"
        ? WalCheckpointer.start(
            sqliteConnection(dataSource),
            file,
            options.walCheckpoints.settings,
            options.walCheckpoints,
            (job) => this.queue.run(job),
          )
        : null;
  }

  getTask(taskId: string): Promise<TaskRecord | null> {
    return this.guard(async () => {
      const [row] = (await this.query(SELECT_TASK, [taskId])) as Row[];
      return row ? taskFromRow(cellsOf(row, "")) : null;
    });
  }

  getListedTask(taskId: string): Promise<ListedTask | null> {
    return this.guard(async () => {
      const [row] = (await this.query(SELECT_LISTED_TASK, [taskId])) as Row[];
      return row ? listedTaskFromRow(cellsOf(row, "")) : null;
    });
  }

  createTask(task: TaskRecord): Promise<void> {
    return this.guard(async () => {
      // One statement that commits itself: on MySQL a connection lost while it was out leaves its
      // outcome unknown, as a COMMIT's (classifyCommitFailure).
      await this.query(INSERT_TASK, taskValues(task)).catch((error: unknown) => {
        throw this.dialect === "mysql" ? classifyCommitFailure(error) : error;
      });
    });
  }

  getPlan(taskId: string): Promise<HeadRecord | null> {
    return this.guard(async () => {
      const head = await this.head(taskId);
      return head && !head.deleted ? head : null;
    });
  }

  listRevisions(taskId: string, beforeNumber: number | null, limit: number): Promise<RevisionMeta[]> {
    return this.guard(() => listRevisions(this.historyQuery, taskId, beforeNumber, limit));
  }

  getRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null> {
    return this.guard(() => revisionWithContent(this.query, taskId, revisionId));
  }

  getHead(taskId: string): Promise<HeadRecord | null> {
    return this.guard(() => this.head(taskId));
  }

  private async head(taskId: string): Promise<HeadRecord | null> {
    const [row] = (await this.query(SELECT_HEAD, [taskId])) as Row[];
    return row ? headFromRow(cellsOf(row, "")) : null;
  }

  private readonly query: Query = (sql, parameters) => this.dataSource.query(sql, parameters);

  readChanges(
    taskId: string,
    after: ChangeKey,
    limit: number,
    withContent: boolean,
  ): Promise<StoredChange[]> {
    return this.changes.readChanges(taskId, after, limit, withContent);
  }

  readPlanChanges(
    taskId: string,
    sinceVersion: number,
    limit: number,
  ): ReturnType<PlanStore["readPlanChanges"]> {
    return this.changes.readPlanChanges(taskId, sinceVersion, limit);
  }

  oldestChangeVersion(taskId: string): Promise<number | null> {
    return this.changes.oldestChangeVersion(taskId);
  }

  watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>> {
    return this.changes.watchedTaskStates(taskIds);
  }

  pruneChangesBefore(olderThan: Date, limit: number): Promise<number> {
    return this.guard(() => pruneBatch(this.dataSource, this.dialect, { olderThan }, limit));
  }

  pruneTaskChanges(taskId: string, upToVersion: number, limit: number): Promise<number> {
    return this.guard(() => pruneBatch(this.dataSource, this.dialect, { taskId, upToVersion }, limit));
  }

  listTasks(
    workspaces: ReadonlySet<string> | "all",
    workspaceId: string | null,
    afterId: string,
    limit: number,
  ): Promise<ListedTask[]> {
    return this.guard(() => listTasks(this.query, workspaces, workspaceId, afterId, limit));
  }

  exportPage(taskId: string, afterNumber: number, maxBytes: number): Promise<TaskExportPage | null> {
    return this.guard(() =>
      this.inSnapshot((query) => readExportPage(query, this.sql, taskId, afterNumber, maxBytes)),
    );
  }

  importTask(
    bundle: TaskBundle,
    judge: ImportJudge,
    dryRun: boolean,
  ): Promise<{ outcome: ImportOutcome; change: ChangeRecord | null }> {
    const lockSuffix = this.dialect === "mysql" ? " FOR UPDATE" : "";
    return this.guard(() =>
      this.transactions.run((statements) =>
        importInTransaction(statements, this.sql, lockSuffix, bundle, judge, dryRun),
      ),
    );
  }

  /**
   * `work`'s reads in one snapshot. SQLite: the store's queue runs one job at a time, so no write
   * commits between them. MySQL: one connection in a REPEATABLE READ, read-only transaction started
   * WITH CONSISTENT SNAPSHOT (the write path's READ COMMITTED is a session setting; SET TRANSACTION
   * applies to this transaction only).
   */
  private async inSnapshot<T>(work: (query: Query) => Promise<T>): Promise<T> {
    if (this.dialect !== "mysql") return work(this.query);
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      await runner.query("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
      try {
        const result = await work((sql, parameters) => runner.query(sql, parameters));
        await runner.query("COMMIT");
        return result;
      } catch (error) {
        await runner.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    } finally {
      await runner.release();
    }
  }

  // The concrete transaction, whose row statements storage's own tests drive one by one. On MySQL
  // it runs on a pooled connection of its own, without a query runner (transaction.ts).
  inTransaction<T>(work: (tx: SqlWriteTx) => Promise<T>): Promise<T> {
    return this.guard(() =>
      this.transactions.run((statements) =>
        work(new SqlWriteTx(statements, this.dialect, this.contentAtHead)),
      ),
    );
  }

  ping(): Promise<void> {
    return this.guard(async () => {
      await this.dataSource.query("SELECT 1");
    });
  }

  async close(): Promise<void> {
    await this.queue.run(async () => {
      // The worker's connection first: the last connection to close checkpoints the log and removes it.
      await this.checkpoints?.stop();
      if (this.dataSource.isInitialized) await this.dataSource.destroy();
    });
  }

  private guard<T>(job: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      try {
        return await job();
      } catch (error) {
        throw classifyStorageError(error);
      }
    });
  }
}
