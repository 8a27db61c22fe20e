import type { DataSource, EntityManager } from "typeorm";
import type { Dialect } from "./data-source";
import { PlanEntity } from "./entities/plan.entity";
import { RevisionEntity } from "./entities/revision.entity";
import { TaskEntity } from "./entities/task.entity";
import type { PlanStore, PlanWriteTx } from "./plan-store";
import type { HeadRecord, RevisionMeta, RevisionRecord, TaskRecord } from "./records";
import {
  headFromEntity,
  headToEntity,
  revisionFromEntity,
  revisionMetaFromEntity,
  revisionToEntity,
  taskFromEntity,
  taskToEntity,
} from "./record-mapping";
import { noQueue, SerialQueue } from "./serial-queue";
import { classifyStorageError, StorageConflictError } from "./storage-errors";

const REVISION_META_COLUMNS = [
  "r.id",
  "r.taskId",
  "r.revisionNumber",
  "r.title",
  "r.contentBytes",
  "r.contentChars",
  "r.authorKind",
  "r.authorName",
  "r.revertOfRevisionId",
  "r.createdAt",
  "r.updatedAt",
  "r.rowVersion",
];

const ROW_LOCK_WAIT_SECONDS = 5;

/** PlanStore over TypeORM, for SQLite (embedded default) and MySQL/MariaDB (production). */
export class TypeOrmPlanStore implements PlanStore {
  private readonly queue: { run<T>(job: () => Promise<T>): Promise<T> };

  constructor(
    private readonly dataSource: DataSource,
    private readonly dialect: Dialect,
  ) {
    this.queue = dialect === "sqlite" ? new SerialQueue() : noQueue;
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
      const row = await this.dataSource.getRepository(RevisionEntity).findOneBy({ taskId, id: revisionId });
      return row ? revisionFromEntity(row) : null;
    });
  }

  markImplementationStarted(
    taskId: string,
    mark: { at: Date; by: string; sessionId: string },
  ): Promise<HeadRecord | null> {
    return this.guard(() =>
      this.dataSource.transaction(async (manager) => {
        await manager
          .createQueryBuilder()
          .update(PlanEntity)
          .set({
            implementationStartedAt: mark.at.getTime(),
            implementationStartedBy: mark.by,
            implementationStartedSessionId: mark.sessionId,
            updatedAt: mark.at.getTime(),
          })
          .where("task_id = :taskId AND deleted = 0 AND implementation_started_at IS NULL", { taskId })
          .execute();
        const row = await manager.findOneBy(PlanEntity, { taskId });
        return row && !row.deleted ? headFromEntity(row) : null;
      }),
    );
  }

  inTransaction<T>(work: (tx: PlanWriteTx) => Promise<T>): Promise<T> {
    return this.guard(() => {
      const run = async (manager: EntityManager) => {
        if (this.dialect === "mysql") await this.boundRowLockWait(manager);
        return work(new TypeOrmWriteTx(manager, this.dialect));
      };
      // READ COMMITTED: every statement sees the latest commit; the locking reads do the ordering.
      return this.dialect === "mysql"
        ? this.dataSource.transaction("READ COMMITTED", run)
        : this.dataSource.transaction(run);
    });
  }

  // A writer stuck behind a row lock (its holder paused or partitioned) gives up after a few seconds
  // with ABORTED instead of InnoDB's default 50 s; set once per pooled connection.
  private readonly boundConnections = new WeakSet<object>();
  private async boundRowLockWait(manager: EntityManager): Promise<void> {
    const connection = (manager.queryRunner as { databaseConnection?: object } | undefined)
      ?.databaseConnection;
    if (!connection || this.boundConnections.has(connection)) return;
    await manager.query(`SET SESSION innodb_lock_wait_timeout = ${ROW_LOCK_WAIT_SECONDS}`);
    this.boundConnections.add(connection);
  }

  ping(): Promise<void> {
    return this.guard(async () => {
      await this.dataSource.query("SELECT 1");
    });
  }

  async close(): Promise<void> {
    await this.queue.run(async () => {
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

/** One write transaction. On MySQL the task and HEAD reads are `SELECT ... FOR UPDATE`. */
class TypeOrmWriteTx implements PlanWriteTx {
  constructor(
    private readonly manager: EntityManager,
    private readonly dialect: Dialect,
  ) {}

  async lockTask(taskId: string): Promise<TaskRecord | null> {
    const query = this.manager.createQueryBuilder(TaskEntity, "t").where("t.id = :taskId", { taskId });
    const row = await this.locking(query).getOne();
    return row ? taskFromEntity(row) : null;
  }

  async readHead(taskId: string): Promise<HeadRecord | null> {
    const query = this.manager.createQueryBuilder(PlanEntity, "p").where("p.taskId = :taskId", { taskId });
    const row = await this.locking(query).getOne();
    return row ? headFromEntity(row) : null;
  }

  async latestRevision(taskId: string): Promise<RevisionRecord | null> {
    const row = await this.manager
      .createQueryBuilder(RevisionEntity, "r")
      .where("r.taskId = :taskId", { taskId })
      .orderBy("r.revisionNumber", "DESC")
      .limit(1)
      .getOne();
    return row ? revisionFromEntity(row) : null;
  }

  async findRevision(taskId: string, revisionId: string): Promise<RevisionRecord | null> {
    const row = await this.manager.findOneBy(RevisionEntity, { taskId, id: revisionId });
    return row ? revisionFromEntity(row) : null;
  }

  async nextRevisionNumber(taskId: string): Promise<number> {
    const raw = await this.manager
      .createQueryBuilder(RevisionEntity, "r")
      .select("MAX(r.revisionNumber)", "max")
      .where("r.taskId = :taskId", { taskId })
      .getRawOne<{ max: number | string | null }>();
    return Number(raw?.max ?? 0) + 1;
  }

  async insertHead(head: HeadRecord): Promise<void> {
    await this.manager.insert(PlanEntity, headToEntity(head));
  }

  async updateHead(head: HeadRecord, fenceVersion: number): Promise<void> {
    const { taskId: _taskId, ...columns } = headToEntity(head);
    const result = await this.manager
      .createQueryBuilder()
      .update(PlanEntity)
      .set(columns)
      .where("task_id = :taskId AND version = :fenceVersion", { taskId: head.taskId, fenceVersion })
      .execute();
    if (result.affected !== 1) throw new StorageConflictError("plan version fence lost");
  }

  async insertRevision(revision: RevisionRecord): Promise<void> {
    await this.manager.insert(RevisionEntity, revisionToEntity(revision));
  }

  async updateRevision(revision: RevisionRecord, fenceRowVersion: number): Promise<void> {
    const { id, ...columns } = revisionToEntity(revision);
    const result = await this.manager
      .createQueryBuilder()
      .update(RevisionEntity)
      .set(columns)
      .where("id = :id AND row_version = :fenceRowVersion", { id, fenceRowVersion })
      .execute();
    if (result.affected !== 1) throw new StorageConflictError("revision row version fence lost");
  }

  async deleteTask(taskId: string): Promise<void> {
    await this.manager.delete(RevisionEntity, { taskId });
    await this.manager.delete(PlanEntity, { taskId });
    await this.manager.delete(TaskEntity, { id: taskId });
  }

  private locking<Q extends { setLock(mode: "pessimistic_write"): Q }>(query: Q): Q {
    // SQLite has no row locks (and needs none: the SerialQueue runs one transaction at a time).
    return this.dialect === "mysql" ? query.setLock("pessimistic_write") : query;
  }
}
