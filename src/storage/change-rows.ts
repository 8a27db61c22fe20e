import {
  type AuthorKind,
  type ChangeRecord,
  type ChangedPlan,
  isChangeKind,
  type StoredChange,
} from "./records";

/** task_plan_changes columns, in the order changeParameters gives their values (content last). */
export const CHANGE_COLUMNS =
  "task_id, version, step, kind, committed_at, plan, revision_id, revision_number, revision_coalesced," +
  " author_kind, author_name, content";

/** The values of a change row but its content (which the database copies from HEAD or leaves NULL). */
export function changeParameters(change: ChangeRecord): unknown[] {
  return [
    change.taskId,
    change.version,
    change.step,
    change.kind,
    change.committedAt.getTime(),
    JSON.stringify(planToJson(change.plan)),
    change.revision?.id ?? null,
    change.revision?.number ?? null,
    change.revision === null ? null : change.revision.coalesced ? 1 : 0,
    change.author.kind,
    change.author.name,
  ];
}

/** One row of task_plan_changes as both drivers return it. */
export type ChangeRow = Record<string, string | number | null>;

/** A stored change; `content` is null unless the read selected it. */
export function changeFromRow(row: ChangeRow): StoredChange {
  const kind = String(row.kind);
  if (!isChangeKind(kind)) throw new Error(`unknown change kind ${kind}`);
  return {
    taskId: String(row.task_id),
    version: Number(row.version),
    step: Number(row.step) === 1 ? 1 : 0,
    kind,
    committedAt: new Date(Number(row.committed_at)),
    plan: planFromJson(JSON.parse(String(row.plan)) as PlanJson),
    revision:
      row.revision_id === null || row.revision_id === undefined
        ? null
        : {
            id: String(row.revision_id),
            number: Number(row.revision_number),
            coalesced: Number(row.revision_coalesced) === 1,
          },
    author: { kind: authorKind(row.author_kind), name: String(row.author_name) },
    content: row.content === null || row.content === undefined ? null : String(row.content),
  };
}

export type PlanJson = Omit<ChangedPlan, "createdAt" | "updatedAt" | "implementationStartedAt" | "taskId"> & {
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
  };
}

export function planFromJson(json: PlanJson): ChangedPlan {
  return {
    ...json,
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
