import type { Caller } from "../auth/caller";
import type { PlanStore } from "./ports/plan-store";
import type { HeadRecord, RevisionMeta, RevisionRecord, TaskRecord } from "./ports/records";
import { planErrors } from "./errors";
import { decodePageToken, encodePageToken } from "./rules/page-token";
import { type ContentRange, readRange } from "./rules/partial-read";
import { reachableTask } from "./pipeline/reach";
import { effectivePageSize, requireId } from "./rules/validate";

/** A page of revision metadata. */
export interface RevisionPage {
  readonly revisions: readonly RevisionMeta[];
  readonly nextPageToken: string;
}

/** Plan reads: reach check, then one store read (no lock: a row read is a coherent snapshot). */
export class PlanQueries {
  constructor(private readonly store: PlanStore) {}

  /**
   * The current plan (NOT_FOUND PLAN_NOT_FOUND when the task has none), whole or a code-point range;
   * with expectedVersion, VERSION_MISMATCH unless it is current. One row read: a coherent snapshot.
   */
  async getPlan(
    caller: Caller,
    request: {
      taskId: string;
      offset?: number | undefined;
      limit?: number | undefined;
      expectedVersion?: number | undefined;
    },
  ): Promise<{ plan: HeadRecord; range: ContentRange }> {
    await this.reach(caller, requireId("task_id", request.taskId));
    const plan = await this.store.getPlan(request.taskId);
    if (plan === null) throw planErrors.planNotFound(request.taskId);
    if (request.expectedVersion !== undefined && request.expectedVersion !== plan.version) {
      throw planErrors.versionMismatch();
    }
    return { plan, range: readRange(plan.content, request.offset, request.limit) };
  }

  /** Revisions newest first, metadata only, paged (AIP-158). */
  async listRevisions(
    caller: Caller,
    request: { taskId: string; pageSize: number; pageToken: string },
  ): Promise<RevisionPage> {
    await this.reach(caller, requireId("task_id", request.taskId));
    const size = effectivePageSize(request.pageSize);
    const before = decodePageToken(request.taskId, request.pageToken);
    const rows = await this.store.listRevisions(request.taskId, before, size + 1);
    const page = rows.slice(0, size);
    const last = page[page.length - 1];
    return {
      revisions: page,
      nextPageToken: rows.length > size && last ? encodePageToken(request.taskId, last.number) : "",
    };
  }

  /** One revision with content; task-scoped. */
  async getRevision(
    caller: Caller,
    request: { taskId: string; revisionId: string },
  ): Promise<RevisionRecord> {
    await this.reach(caller, requireId("task_id", request.taskId));
    requireId("revision_id", request.revisionId);
    const revision = await this.store.getRevision(request.taskId, request.revisionId);
    if (revision === null) throw planErrors.revisionNotFound(request.taskId, request.revisionId);
    return revision;
  }

  private reach(caller: Caller, taskId: string): Promise<TaskRecord> {
    return reachableTask(this.store, caller, taskId);
  }
}
