import type { DataSource } from "typeorm";
import { type Dialect, sqliteConnection } from "./data-source";
import { PlanEntity } from "./entities/plan.entity";
import { RevisionEntity } from "./entities/revision.entity";
import { TaskEntity } from "./entities/task.entity";
import type { PlanStore } from "../plans/ports/plan-store";
import type {
  ChangeKey,
  ChangeRecord,
  HeadRecord,
  RevisionMeta,
  RevisionRecord,
  StoredChange,
  TaskRecord,
} from "../plans/ports/records";
import { ChangeLog } from "./change-log";
import { headFromEntity, revisionMetaFromEntity, taskFromEntity, taskToEntity } from "./record-mapping";
import { REVISION_META_COLUMNS, revisionWithContent } from "./revision-rows";
import { noQueue, SerialQueue } from "./serial-queue";
import { classifyStorageError } from "./storage-errors";
import { runnerWork, type UnitOfWork, unitOfWork } from "./unit-of-work";
import { type CheckpointObserver, type CheckpointSettings, WalCheckpointer } from "./wal-checkpointer";
import type { WriteConnectionOptions } from "./write-connection";
import { SqlWriteTx } from "./write-tx";
import type { WriteStatements } from "./write-statements";

/** PlanStore over TypeORM, for SQLite (embedded default) and MySQL/MariaDB (production). */
export class TypeOrmPlanStore implements PlanStore {
  private readonly queue: { run<T>(job: () => Promise<T>): Promise<T> };

  private readonly contentAtHead: boolean;
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
    } = {},
  ) {
    this.queue = dialect === "sqlite" ? new SerialQueue() : noQueue;
    this.contentAtHead = options.revisionContentAtHead ?? false;
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
      const row = await this.dataSource.getRepository(TaskEntity).findOneBy({ id: taskId });
      return row ? taskFromEntity(row) : null;
    });
  }

  createTask(task: TaskRecord): Promise<void> {
    return this.guard(async () => {
      await this.dataSource.getRepository(TaskEntity).insert(taskToEntity(task));
    });
  }

  getPlan(taskId: string): Promise<HeadRecord | null> {
    return this.guard(async () => {
      const row = await this.dataSource.getRepository(PlanEntity).findOneBy({ taskId });
      return row && !row.deleted ? headFromEntity(row) : null;
    });
  }

  listRevisions(taskId: string, beforeNumber: number | null, limit: number): Promise<RevisionMeta[]> {
    return this.guard(async () => {
      const query = this.dataSource
        .getRepository(RevisionEntity)
        .createQueryBuilder("r")
        .select(REVISION_META_COLUMNS)
        .where("r.taskId = :taskId", { taskId })
        .orderBy("r.revisionNumber", "DESC")
        .limit(limit);
      if (beforeNumber !== null) query.andWhere("r.revisionNumber < :beforeNumber", { beforeNumber });
      return (await query.getMany()).map(revisionMetaFromEntity);
    });
  }

  getRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null> {
    return this.guard(async () => {
      return revisionWithContent(
        (sql, parameters) => this.dataSource.query(sql, parameters),
        taskId,
        revisionId,
      );
    });
  }

  getHead(taskId: string): Promise<HeadRecord | null> {
    return this.guard(async () => {
      const row = await this.dataSource.getRepository(PlanEntity).findOneBy({ taskId });
      return row ? headFromEntity(row) : null;
    });
  }

  markImplementationStarted(
    taskId: string,
    mark: { at: Date; by: string; sessionId: string },
    change: (marked: HeadRecord) => ChangeRecord,
  ): Promise<{ head: HeadRecord; marked: boolean } | null> {
    return this.guard(() =>
      this.dataSource.transaction(async (manager) => {
        const result = await manager
          .createQueryBuilder()
          .update(PlanEntity)
          .set({
            implementationStartedAt: mark.at.getTime(),
            implementationStartedBy: mark.by,
            implementationStartedSessionId: mark.sessionId,
            updatedAt: mark.at.getTime(),
            // The change row this records holds a copy of the content (see below).
            historyBytes: () => "history_bytes + content_bytes",
          })
          .where("task_id = :taskId AND deleted = 0 AND implementation_started_at IS NULL", { taskId })
          .execute();
        const row = await manager.findOneBy(PlanEntity, { taskId });
        if (!row || row.deleted) return null;
        const head = headFromEntity(row);
        const marked = result.affected === 1;
        if (marked)
          await runnerWork(manager.queryRunner, this.dialect, async (statements) =>
            this.writeTx(statements).tables.changes.recordChange(change(head), { form: "head" }),
          );
        return { head, marked };
      }),
    );
  }

  readChanges(
    taskId: string,
    after: ChangeKey,
    limit: number,
    withContent: boolean,
  ): Promise<StoredChange[]> {
    return this.changes.readChanges(taskId, after, limit, withContent);
  }

  oldestChangeVersion(taskId: string): Promise<number | null> {
    return this.changes.oldestChangeVersion(taskId);
  }

  watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>> {
    return this.changes.watchedTaskStates(taskIds);
  }

  pruneChangesBefore(olderThan: Date, limit: number): Promise<number> {
    return this.changes.pruneChangesBefore(olderThan, limit);
  }

  pruneTaskChanges(taskId: string, upToVersion: number, limit: number): Promise<number> {
    return this.changes.pruneTaskChanges(taskId, upToVersion, limit);
  }

  // The concrete transaction, whose row statements storage's own tests drive one by one. On MySQL
  // it runs on a pooled connection of its own, without a query runner (unit-of-work.ts).
  inTransaction<T>(work: (tx: SqlWriteTx) => Promise<T>): Promise<T> {
    return this.guard(() => this.transactions.run((statements) => work(this.writeTx(statements))));
  }

  private writeTx(statements: WriteStatements): SqlWriteTx {
    return new SqlWriteTx(statements, this.dialect, this.contentAtHead);
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
