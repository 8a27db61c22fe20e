import type {
  DiffPlanRevisionsResponse,
  GetPlanChangesResponse,
  PlanChangeSummary,
} from "@taskplans/contract";
import type { PlanChanges, RevisionDiff } from "../../plans/change-queries";
import type { StoredChange } from "../../plans/ports/records";
import { encodeAuthorKind, encodePlan, encodeRevision } from "./encode";
import { encodeChangeKind } from "./encode-change";

/** GetPlanChanges' answer: the plan without content, the diff, the changes in between. */
export function encodePlanChanges(answer: PlanChanges): GetPlanChangesResponse {
  return {
    plan: encodePlan(answer.plan, false),
    sinceVersion: answer.sinceVersion,
    diff: answer.diff,
    changes: answer.changes.map(encodeChangeSummary),
    changesTruncated: answer.truncated,
  };
}

/** DiffPlanRevisions' answer: both revisions without content, and the diff. */
export function encodeRevisionDiff(answer: RevisionDiff): DiffPlanRevisionsResponse {
  return {
    fromRevision: { ...encodeRevision(answer.from), content: "" },
    toRevision: { ...encodeRevision(answer.to), content: "" },
    diff: answer.diff,
  };
}

function encodeChangeSummary(change: StoredChange): PlanChangeSummary {
  return {
    version: change.version,
    kind: encodeChangeKind(change.kind),
    author: { kind: encodeAuthorKind(change.author.kind), name: change.author.name },
    committedAt: change.committedAt,
    revision: change.revision ?? undefined,
  };
}
