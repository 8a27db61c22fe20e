import { type Caller, reachesWorkspace } from "../auth/caller";
import { isOperator } from "../auth/operators";
import type { PlanStore } from "./ports/plan-store";
import type { ImportOutcome, TaskBundle, TaskExportPage, TaskRecord } from "./ports/records";
import { StorageConflictError } from "./ports/store-errors";
import { planErrors } from "./errors";
import { checkHistoryBudget, type HistoryBudget } from "./history-budget";
import { verifyReach } from "./reach";
import {
  checkBundle,
  decodeTaskPageToken,
  encodeTaskPageToken,
  sameTask,
  snapshotOf,
  taskPageSize,
} from "./transfer-rules";
import { checkTitle, requireId } from "./validate";

/** About this much revision content per export page, so that a page stays under the 1 MiB message limit. */
export const EXPORT_PAGE_BYTES = 512 * 1024;

/** What an import is given: the bundle, the count its stream declared, and how to treat a stored task. */
export interface ImportRequest {
  readonly bundle: TaskBundle;
  readonly declaredCount: number;
  readonly overwrite: boolean;
  readonly dryRun: boolean;
}

/**
 * Export and import of whole tasks (issue 46): ListTasks, ExportTask and ImportTask's use cases.
 * An import bypasses the write pipeline (it writes a whole task, not a change of one) and holds the
 * imported history to this deployment's budget as one write would be.
 */
export class TaskTransfer {
  constructor(
    private readonly store: PlanStore,
    private readonly operators: ReadonlySet<string>,
    private readonly historyBudget: HistoryBudget,
  ) {}

  /** A page of the tasks the caller reaches (of `workspaceId` when not empty), in id order. */
  async listTasks(
    caller: Caller,
    request: { workspaceId: string; pageSize: number; pageToken: string },
  ): Promise<{ tasks: TaskRecord[]; nextPageToken: string }> {
    const workspaceId = request.workspaceId === "" ? null : requireId("workspace_id", request.workspaceId);
    if (workspaceId !== null && !reachesWorkspace(caller, workspaceId)) throw planErrors.taskNotReachable();
    const limit = taskPageSize(request.pageSize);
    const afterId = decodeTaskPageToken(request.pageToken, workspaceId);
    const tasks = await this.store.listTasks(caller.workspaces, workspaceId, afterId, limit);
    const last = tasks[tasks.length - 1];
    return {
      tasks,
      nextPageToken: tasks.length === limit && last ? encodeTaskPageToken(last.id, workspaceId) : "",
    };
  }

  /** One page of a task's export; EXPORT_CHANGED when the task is no longer at `snapshot`'s version. */
  async exportPage(
    caller: Caller,
    request: { taskId: string; afterRevisionNumber: number; snapshot: string },
  ): Promise<TaskExportPage & { readonly snapshot: string }> {
    const taskId = requireId("task_id", request.taskId);
    const page = await this.store.exportPage(taskId, request.afterRevisionNumber, EXPORT_PAGE_BYTES);
    verifyReach(caller, taskId, page?.task ?? null);
    const read = page as TaskExportPage;
    const snapshot = snapshotOf(read);
    if (request.snapshot !== "" && request.snapshot !== snapshot) throw planErrors.exportChanged(taskId);
    if (request.snapshot === "" && request.afterRevisionNumber !== 0)
      throw planErrors.invalidField("snapshot", "is required after the first page");
    return { ...read, snapshot };
  }

  /** IMPORT_NOT_PERMITTED unless the caller is an operator (checked before an import's stream is read). */
  requireOperator(caller: Caller): void {
    if (!isOperator(caller, this.operators)) throw planErrors.importNotPermitted();
  }

  /** Most plan text one import may carry (its history budget), for the stream's early bound. */
  get maxImportBytes(): number {
    return this.historyBudget.maxBytes > 0 ? this.historyBudget.maxBytes : Number.POSITIVE_INFINITY;
  }

  /**
   * Recreates an exported task in one transaction. Operators only (IMPORT_NOT_PERMITTED), into a
   * workspace the caller reaches; the task must be one consistent task (IMPORT_INVALID) within the
   * history budget (HISTORY_QUOTA_EXCEEDED). A task stored exactly so is left alone ("unchanged");
   * one stored otherwise is IMPORT_CONFLICT unless `overwrite`.
   */
  async importTask(caller: Caller, request: ImportRequest): Promise<ImportOutcome> {
    this.requireOperator(caller);
    const { bundle } = request;
    requireId("task.task_id", bundle.task.id);
    requireId("task.workspace_id", bundle.task.workspaceId);
    checkTitle("task.title", bundle.task.title);
    if (!reachesWorkspace(caller, bundle.task.workspaceId)) throw planErrors.taskNotReachable();
    checkBundle(bundle, request.declaredCount);
    const bytes = bundle.revisions.reduce((sum, revision) => sum + revision.contentBytes, 0);
    checkHistoryBudget(
      this.historyBudget,
      { revisions: 0, bytes: 0 },
      {
        revisions: bundle.revisions.length,
        bytes,
      },
    );
    const decide = (stored: TaskBundle | null): ImportOutcome => {
      if (stored === null) return "created";
      if (!reachesWorkspace(caller, stored.task.workspaceId)) throw planErrors.taskNotReachable();
      if (sameTask(stored, bundle)) return "unchanged";
      if (!request.overwrite) throw planErrors.importConflict(bundle.task.id);
      return "overwritten";
    };
    try {
      return await this.store.importTask(bundle, decide, request.dryRun);
    } catch (error) {
      // A concurrent import or create of the same id (or a revision id another task holds), a
      // deadlock or a lock wait: retried, the import then finds what is stored and judges it.
      if (error instanceof StorageConflictError) throw planErrors.writeConflict();
      throw error;
    }
  }
}
