import { type Caller, reachesWorkspace } from "../auth/caller";
import type { PlanStore } from "./ports/plan-store";
import type { ListedTask, TaskRecord } from "./ports/records";
import { StorageConflictError } from "./ports/store-errors";
import { planErrors } from "./errors";
import { deleteTaskCommand } from "./writes/history-request";
import { checkTitle, requireId } from "./rules/validate";
import { verifyReach } from "./pipeline/reach";
import type { WritePipeline } from "./pipeline/write-pipeline";

/** Task use cases. Tasks exist so that plan writes can fail with TASK_NOT_FOUND and reach is by workspace. */
export class TaskService {
  constructor(
    private readonly store: PlanStore,
    private readonly pipeline: WritePipeline,
    private readonly clock: () => Date,
    private readonly newId: () => string,
  ) {}

  /**
   * Creates a task in a workspace the caller reaches (an empty id gets a generated one). TASK_EXISTS
   * when the id is taken in any workspace: the answer never depends on whether the caller reaches
   * the task that holds it, so CreateTask cannot tell a caller which ids other workspaces use.
   */
  async createTask(
    caller: Caller,
    request: { taskId: string; workspaceId: string; title: string },
  ): Promise<TaskRecord> {
    const task: TaskRecord = {
      id: request.taskId === "" ? this.newId() : requireId("task_id", request.taskId),
      workspaceId: requireId("workspace_id", request.workspaceId),
      title: checkTitle("title", request.title) ?? "",
      createdAt: this.clock(),
    };
    if (!reachesWorkspace(caller, task.workspaceId)) throw planErrors.taskNotReachable();
    const existing = await this.store.getTask(task.id);
    if (existing !== null) throw planErrors.taskExists(task.id);
    try {
      await this.store.createTask(task);
    } catch (error) {
      // Lost a race with a concurrent create of the same id.
      if (error instanceof StorageConflictError) throw planErrors.taskExists(task.id);
      throw error;
    }
    return task;
  }

  /** A task the caller reaches, with its plan's checklist progress. */
  async getTask(caller: Caller, taskId: string): Promise<ListedTask> {
    const id = requireId("task_id", taskId);
    const task = await this.store.getListedTask(id);
    verifyReach(caller, id, task);
    return task as ListedTask;
  }

  /** Deletes a task with its plan and revisions, serialized with plan writes. */
  deleteTask(caller: Caller, taskId: string, deadline = Number.POSITIVE_INFINITY): Promise<void> {
    return this.pipeline.execute(deleteTaskCommand(taskId), { caller, deadline });
  }
}
