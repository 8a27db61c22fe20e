import { type Caller, reachesWorkspace } from "../../auth/caller";
import type { PlanStore } from "../ports/plan-store";
import type { TaskRecord } from "../ports/records";
import { planErrors } from "../errors";

/**
 * The task, if the caller reaches it. Checked before anything else about the task: with auth on, a
 * missing task is reported exactly like an unreachable one (PERMISSION_DENIED), so nothing is
 * disclosed; without auth every task is reachable and a missing one is TASK_NOT_FOUND.
 */
export async function reachableTask(store: PlanStore, caller: Caller, taskId: string): Promise<TaskRecord> {
  const task = await store.getTask(taskId);
  verifyReach(caller, taskId, task);
  return task as TaskRecord;
}

/**
 * Reach of a task from its row (null: the task does not exist), with reachableTask's errors. Writes
 * run it again inside their transaction on the row they locked: that is the check that counts; the
 * one before the lock only answers early.
 */
export function verifyReach(caller: Caller, taskId: string, task: TaskRecord | null): void {
  if (task === null)
    throw caller.authenticated ? planErrors.taskNotReachable() : planErrors.taskNotFound(taskId);
  if (!reachesWorkspace(caller, task.workspaceId)) throw planErrors.taskNotReachable();
}

/**
 * Workspaces of recently written tasks, so that a write's early reach check needs no query (a task
 * never changes workspace; a task deleted and re-created elsewhere is caught by verifyReach inside
 * the transaction). Only a hit that the caller reaches is trusted; anything else reads the task.
 */
export class TaskWorkspaces {
  private readonly workspaces = new Map<string, string>();

  constructor(private readonly capacity = 10_000) {}

  /** The early reach check of a write (same errors as reachableTask). */
  reachForWrite(store: PlanStore, caller: Caller, taskId: string): Promise<void> | null {
    const known = this.workspaces.get(taskId);
    if (known !== undefined && reachesWorkspace(caller, known)) return null; // known: no await
    return reachableTask(store, caller, taskId).then((task) => this.remember(taskId, task.workspaceId));
  }

  private remember(taskId: string, workspaceId: string): void {
    this.workspaces.delete(taskId);
    if (this.workspaces.size >= this.capacity) {
      const oldest = this.workspaces.keys().next().value;
      if (oldest !== undefined) this.workspaces.delete(oldest);
    }
    this.workspaces.set(taskId, workspaceId);
  }
}
