import type { AuthorKind, ChangedPlan, StoredChecklist } from "./records";

export type PlanJson = Omit<
  ChangedPlan,
  "createdAt" | "updatedAt" | "implementationStartedAt" | "taskId" | "checklist"
> & {
  /** Absent in the rows of changes written before the checklist was counted. */
  readonly checklist?: StoredChecklist | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly implementationStartedAt: number | null;
  readonly taskId: string;
};

/** A changed plan as JSON (dates as epoch ms): the `plan` column, and the plan a notification carries. */
export function planToJson(plan: ChangedPlan): PlanJson {
  return {
    taskId: plan.taskId,
    title: plan.title,
    contentBytes: plan.contentBytes,
    contentChars: plan.contentChars,
    version: plan.version,
    createdBy: plan.createdBy,
    createdAt: plan.createdAt.getTime(),
    updatedAt: plan.updatedAt.getTime(),
    latestRevisionNumber: plan.latestRevisionNumber,
    deleted: plan.deleted,
    implementationStartedAt: plan.implementationStartedAt?.getTime() ?? null,
    implementationStartedBy: plan.implementationStartedBy,
    implementationStartedSessionId: plan.implementationStartedSessionId,
    checklist: plan.checklist,
  };
}

export function planFromJson(json: PlanJson): ChangedPlan {
  return {
    ...json,
    checklist: json.checklist ?? null,
    createdBy: authorKind(json.createdBy),
    createdAt: new Date(json.createdAt),
    updatedAt: new Date(json.updatedAt),
    implementationStartedAt:
      json.implementationStartedAt === null ? null : new Date(json.implementationStartedAt),
  };
}

function authorKind(value: unknown): AuthorKind {
  return value === "user" ? "user" : "agent";
}
