import type { EntityManager } from "typeorm";
import { WriteRequestEntity } from "./entities/write-request.entity";
import type { WriteRequestRecord } from "../plans/ports/records";

/** The remembered write requests of a task (write_requests), read and written inside its write. */
export class WriteRequests {
  constructor(private readonly manager: EntityManager) {}

  async find(taskId: string, requestId: string): Promise<WriteRequestRecord | null> {
    const row = await this.manager.findOneBy(WriteRequestEntity, { taskId, requestId });
    return row ? { ...row, createdAt: new Date(row.createdAt) } : null;
  }

  /** Remembers `request`, forgetting the task's requests made before `forgetBefore`. */
  async remember(request: WriteRequestRecord, forgetBefore: Date): Promise<void> {
    await this.manager
      .createQueryBuilder()
      .delete()
      .from(WriteRequestEntity)
      .where("task_id = :taskId AND created_at < :before", {
        taskId: request.taskId,
        before: forgetBefore.getTime(),
      })
      .execute();
    await this.manager.insert(WriteRequestEntity, { ...request, createdAt: request.createdAt.getTime() });
  }
}
