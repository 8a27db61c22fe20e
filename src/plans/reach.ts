import { type Caller, reachesWorkspace } from "../auth/caller";
import type { PlanStore } from "../storage/plan-store";
import type { TaskRecord } from "../storage/records";
import { planErrors } from "./errors";
import { translated } from "./failures";

/**
 * The task, if the caller reaches it. Checked before anything else about the task: with auth on, a
 * missing task is reported exactly like an unreachable one (PERMISSION_DENIED), so nothing is
 * disclosed; without auth every task is reachable and a missing one is TASK_NOT_FOUND.
 */
export async function reachableTask(store: PlanStore, caller: Caller, taskId: string): Promise<TaskRecord> {
  const task = await translated(() => store.getTask(taskId));
  if (task === null)
    throw caller.authenticated ? planErrors.taskNotReachable() : planErrors.taskNotFound(taskId);
  if (!reachesWorkspace(caller, task.workspaceId)) throw planErrors.taskNotReachable();
  return task;
}
