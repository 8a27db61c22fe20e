import { CountCache } from "../pipeline/checklist-cache";
import type { ChecklistCounter } from "../ports/checklist-counter";
import { storedChecklistOf } from "../writes/checklist-count";
import { type Caller, reachesWorkspace } from "../../auth/caller";
import { isOperator } from "../../auth/operators";
import type { PlanStore } from "../ports/plan-store";
import type {
  ChangeRecord,
  ImportOutcome,
  RevisionRecord,
  TaskBundle,
  TaskExportPage,
  TaskRecord,
} from "../ports/records";
import type { LockLease } from "../ports/task-lock";
import { StorageConflictError } from "../ports/store-errors";
import { planErrors } from "../errors";
import { checkHistoryBudget, type HistoryBudget } from "../pipeline/history-budget";
import { verifyReach } from "../pipeline/reach";
import { resolveAuthor } from "../rules/author";
import { importedChange, importedWithoutPlanChange } from "../changes/change-rows";
import { summarize } from "../pipeline/events";
import { ImportStream, type ImportStart } from "./import-stream";
import { sameTask } from "./same-task";
import {
  decodeTaskPageToken,
  encodeTaskPageToken,
  type ImportBounds,
  importBounds,
  snapshotOf,
  taskPageSize,
} from "./transfer-rules";
import { requireId } from "../rules/validate";
import { type WritePipeline, writeCall } from "../pipeline/write-pipeline";

/** About this much revision content per export page, so that a page stays under the 1 MiB message limit. */
export const EXPORT_PAGE_BYTES = 512 * 1024;

/** What an import is given: the checked stream, and how to treat a stored task. */
export interface ImportRequest {
  readonly stream: ImportStream;
  readonly overwrite: boolean;
  readonly dryRun: boolean;
  /** The caller's deadline (epoch ms; Infinity for none): bounds the wait for the task's lock. */
  readonly deadline?: number | undefined;
}

/**
 * Export and import of whole tasks (issue 46): ListTasks, ExportTask and ImportTask's use cases.
 * An import is a write like the others (issue 54): every field held to the rule of the write that
 * sets it as its stream arrives (ImportStream), the imported history to this deployment's budget,
 * and the write committed through the pipeline's serialized region (the task's lock, then the
 * listeners, told of the `imported` change it records).
 */
export class TaskTransfer {
  private readonly bounds: ImportBounds;

  constructor(
    private readonly store: PlanStore,
    private readonly operators: ReadonlySet<string>,
    private readonly historyBudget: HistoryBudget,
    private readonly pipeline: WritePipeline,
    private readonly checklist: ChecklistCounter,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.bounds = importBounds(historyBudget);
  }

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

  /**
   * Opens an import stream on its first message: IMPORT_NOT_PERMITTED unless the caller is an
   * operator, TASK_NOT_REACHABLE unless it reaches the task's workspace, and the task, HEAD and
   * declared count held to their rules and bounds (ImportStream) before any revision is read.
   */
  openImport(caller: Caller, start: ImportStart): ImportStream {
    this.requireOperator(caller);
    const stream = new ImportStream(start, this.bounds);
    if (!reachesWorkspace(caller, start.task.workspaceId)) throw planErrors.taskNotReachable();
    return stream;
  }

  /**
   * Recreates an exported task in one transaction, under the task's lock. Operators only
   * (IMPORT_NOT_PERMITTED), into a workspace the caller reaches; the task must be one consistent task
   * (IMPORT_INVALID) within the history budget (HISTORY_QUOTA_EXCEEDED). A task stored exactly so is
   * left alone ("unchanged"); one stored otherwise is IMPORT_CONFLICT unless `overwrite`. A task
   * written records one `imported` change, which the pipeline's listeners publish (watchers are told).
   */
  async importTask(caller: Caller, request: ImportRequest): Promise<ImportOutcome> {
    this.requireOperator(caller);
    const streamed = request.stream.finish();
    const { task } = streamed;
    if (!reachesWorkspace(caller, task.workspaceId)) throw planErrors.taskNotReachable();
    const bytes = streamed.revisions.reduce((sum, revision) => sum + revision.contentBytes, 0);
    checkHistoryBudget(
      this.historyBudget,
      { revisions: 0, bytes: 0 },
      { revisions: streamed.revisions.length, bytes },
    );
    // Counted once the import is known to be one the caller may make, within the budget.
    const bundle = await this.counted(streamed);
    const decide = async (stored: TaskBundle | null): Promise<ImportOutcome> => {
      if (stored === null) return "created";
      if (!reachesWorkspace(caller, stored.task.workspaceId)) throw planErrors.taskNotReachable();
      if (await sameTask(stored, bundle)) return "unchanged";
      if (!request.overwrite) throw planErrors.importConflict(task.id);
      return "overwritten";
    };
    const change = (lease: LockLease) => (): ChangeRecord | null => {
      // The lease check is a courtesy, as for every write; the row lock holds.
      if (lease.lost) throw new StorageConflictError("lock lease lost before commit");
      return this.importedChange(caller, bundle);
    };
    const call = writeCall(caller, { deadline: request.deadline });
    try {
      return await this.pipeline.exclusive(task.id, "import", call, async (lease) => {
        const written = await this.store.importTask(
          bundle,
          { decide, change: change(lease) },
          request.dryRun,
        );
        const wrote = written.outcome !== "unchanged" && !request.dryRun;
        return {
          result: written.outcome,
          commit: wrote
            ? { kind: "import", created: written.outcome === "created", change: written.change }
            : null,
        };
      });
    } catch (error) {
      // A concurrent import or create of the same id (or a revision id another task holds), a
      // deadlock or a lock wait: retried, the import then finds what is stored and judges it.
      if (error instanceof StorageConflictError) throw planErrors.writeConflict();
      throw error;
    }
  }

  // The bundle with the checklists of its live HEAD and of its revisions counted by this deployment
  // (an export carries none: they are derived, and counted by the rules of the deployment that shows
  // them), before the import takes the task's lock or a connection; a text the history repeats (the
  // newest revision is HEAD's) is counted once.
  private async counted(bundle: TaskBundle): Promise<TaskBundle> {
    const counter = new CountCache(this.checklist);
    // A revision keeps no "ends open" flag: a plain count (HEAD's, below, is probed for appends).
    const progress = async (text: string) => {
      const { checked, total } = await counter.count(text);
      return { checked, total };
    };
    const revisions: RevisionRecord[] = [];
    for (const revision of bundle.revisions)
      revisions.push({ ...revision, checklist: await progress(revision.content) });
    const { head } = bundle;
    if (head === null || head.deleted) return { task: bundle.task, head, revisions };
    const checklist = await storedChecklistOf(head.content, counter);
    return { task: bundle.task, head: { ...head, checklist }, revisions };
  }

  // The change an import records, by the operator who imported it: the imported plan at its version
  // (a deleted one when the task's plan was deleted), or, for a task imported without a plan, the
  // change that says so. Every import that writes records one, so a watcher of the task is told.
  private importedChange(caller: Caller, bundle: TaskBundle): ChangeRecord {
    const { head, revisions } = bundle;
    const author = resolveAuthor(caller, undefined, "user");
    if (head === null) return importedWithoutPlanChange(bundle.task.id, author, this.clock());
    const newest = revisions[revisions.length - 1] ?? null;
    return importedChange(summarize(head), newest, author, this.clock());
  }
}
