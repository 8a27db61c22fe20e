import type { Caller } from "../auth/caller";
import { planErrors } from "./errors";
import type { PlanStore } from "./ports/plan-store";
import type { HeadRecord, RevisionRecord, StoredChange } from "./ports/records";
import { reachableTask } from "./pipeline/reach";
import { type PlanDiff, unifiedDiffSliced } from "./changes/unified-diff";
import { requireId } from "./rules/validate";

/** The most changes GetPlanChanges lists (the newest; the diff covers them all). */
export const CHANGES_LIST_LIMIT = 100;

/** What changed since a version (GetPlanChanges). */
export interface PlanChanges {
  readonly plan: HeadRecord;
  readonly sinceVersion: number;
  readonly diff: PlanDiff;
  readonly changes: readonly StoredChange[];
  readonly truncated: boolean;
}

/** Two revisions and the diff between them (DiffPlanRevisions). */
export interface RevisionDiff {
  readonly from: RevisionRecord;
  readonly to: RevisionRecord;
  readonly diff: PlanDiff;
}

/**
 * Reads of what changed: reach check, then one store read in one snapshot, then a pure diff,
 * computed in slices between turns of the event loop (unifiedDiffSliced; issue 54). The content at
 * a past version is exact or refused (HISTORY_UNAVAILABLE), never approximated.
 */
export class ChangeQueries {
  constructor(private readonly store: PlanStore) {}

  /** The diff from the content at `sinceVersion` to the current one, and the changes in between. */
  async getPlanChanges(
    caller: Caller,
    request: { taskId: string; sinceVersion?: number | undefined },
  ): Promise<PlanChanges> {
    const taskId = requireId("task_id", request.taskId);
    await reachableTask(this.store, caller, taskId);
    const { sinceVersion } = request;
    if (sinceVersion === undefined) throw planErrors.invalidField("since_version", "is required");
    const read = await this.store.readPlanChanges(taskId, sinceVersion, CHANGES_LIST_LIMIT);
    const { head, since } = read;
    if (head === null || head.deleted) throw planErrors.planNotFound(taskId);
    if (!since.derivable)
      throw planErrors.historyUnavailable("read", sinceVersion, head.version, since.oldestVersion);
    return {
      plan: head,
      sinceVersion,
      diff: await unifiedDiffSliced(since.content, head.content, {
        old: `version ${sinceVersion}`,
        new: `version ${head.version}`,
      }),
      changes: read.changes,
      truncated: read.more,
    };
  }

  /** The diff from one revision's content to another's (either may be older). */
  async diffRevisions(
    caller: Caller,
    request: { taskId: string; fromRevisionId: string; toRevisionId: string },
  ): Promise<RevisionDiff> {
    const taskId = requireId("task_id", request.taskId);
    await reachableTask(this.store, caller, taskId);
    const from = await this.revision(taskId, requireId("from_revision_id", request.fromRevisionId));
    const to = await this.revision(taskId, requireId("to_revision_id", request.toRevisionId));
    const labels = { old: `revision ${from.number}`, new: `revision ${to.number}` };
    return { from, to, diff: await unifiedDiffSliced(from.content, to.content, labels) };
  }

  private async revision(taskId: string, revisionId: string): Promise<RevisionRecord> {
    const revision = await this.store.getRevision(taskId, revisionId);
    if (revision === null) throw planErrors.revisionNotFound(taskId, revisionId);
    return revision;
  }
}
