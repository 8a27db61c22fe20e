import type { PlanApi } from "../calls/rpc";

import type { PlanRevision } from "@taskplans/contract";

/** Everything a rejected write must leave unchanged, read through the API. */
export interface PlanState {
  readonly plan: { title: string; content: string; version: number; latestRevisionNumber: number } | null;
  readonly revisions: readonly PlanRevision[];
}

/** Reads the plan (null when absent) and every revision's metadata of a task. */
export async function planState(plans: PlanApi, taskId: string): Promise<PlanState> {
  let plan: PlanState["plan"] = null;
  try {
    const got = (await plans.getPlan({ taskId })).plan;
    if (got)
      plan = {
        title: got.title,
        content: got.content,
        version: got.version,
        latestRevisionNumber: got.latestRevisionNumber,
      };
  } catch (error) {
    if ((error as { code?: number }).code !== 5) throw error; // NOT_FOUND: no plan
  }
  const revisions: PlanRevision[] = [];
  let pageToken = "";
  do {
    const page = await plans.listPlanRevisions({ taskId, pageSize: 100, pageToken });
    revisions.push(...page.revisions);
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return { plan, revisions };
}
