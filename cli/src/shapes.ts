import {
  type Author,
  AuthorKind,
  MergeMethod,
  type Plan,
  type PlanChangeKind,
  planChangeKindToJSON,
  type PlanDiff,
  type PlanRevision,
  type Task,
  type WritePlanResponse,
  type WrittenRevision,
} from "@taskplans/client";
import { checklistField } from "./checklist-text";

/**
 * The `-o json` documents (docs/planctl.md, "JSON output"): snake_case like the proto's JSON names,
 * times as RFC 3339 strings, enums by their short lower-case names. One module, so every command
 * prints a plan, a revision or a change the same way.
 */
const time = (date: Date | undefined): string | null => date?.toISOString() ?? null;

/** "agent", "user" or "" (unspecified). */
export const authorKindName = (kind: AuthorKind): string =>
  kind === AuthorKind.AUTHOR_KIND_AGENT ? "agent" : kind === AuthorKind.AUTHOR_KIND_USER ? "user" : "";

/** "created", "updated", ... (PLAN_CHANGE_KIND_ removed, lower case). */
export const changeKindName = (kind: PlanChangeKind): string =>
  planChangeKindToJSON(kind)
    .replace(/^PLAN_CHANGE_KIND_/, "")
    .toLowerCase();

export const authorJson = (author: Author | undefined) => ({
  kind: authorKindName(author?.kind ?? AuthorKind.AUTHOR_KIND_UNSPECIFIED),
  name: author?.name ?? "",
});

export const taskJson = (task: Task | undefined) => ({
  task_id: task?.taskId ?? "",
  workspace_id: task?.workspaceId ?? "",
  title: task?.title ?? "",
  created_at: time(task?.createdAt),
  ...checklistField(task?.checklist),
});

/** A plan's metadata (never its content: `get` prints that). */
export const planJson = (plan: Plan | undefined) => ({
  task_id: plan?.taskId ?? "",
  title: plan?.title ?? "",
  version: plan?.version ?? 0,
  content_bytes: plan?.contentBytes ?? 0,
  content_chars: plan?.contentChars ?? 0,
  latest_revision_number: plan?.latestRevisionNumber ?? 0,
  created_by: plan?.createdBy ?? "",
  created_at: time(plan?.createdAt),
  updated_at: time(plan?.updatedAt),
  implementation_started_at: time(plan?.implementationStartedAt),
  implementation_started_by: plan?.implementationStartedBy ?? null,
  ...checklistField(plan?.checklist),
});

export const writtenRevisionJson = (revision: WrittenRevision | undefined) =>
  revision ? { id: revision.id, number: revision.number, coalesced: revision.coalesced } : null;

/**
 * A write's acknowledgement: the task, its new version and size, the revision, and the checklist
 * progress of what was written when the answer carries it; never the plan.
 */
export const writeJson = (response: WritePlanResponse) => ({
  task_id: response.plan?.taskId ?? "",
  version: response.plan?.version ?? 0,
  content_bytes: response.plan?.contentBytes ?? 0,
  content_chars: response.plan?.contentChars ?? 0,
  revision: writtenRevisionJson(response.revision),
  merge: response.merge
    ? {
        from_version: response.merge.fromVersion,
        to_version: response.merge.toVersion,
        method: response.mergeMethod === MergeMethod.MERGE_METHOD_EDIT_REAPPLIED ? "edit" : "lines",
      }
    : null,
  truncation: response.truncation
    ? { prior_chars: response.truncation.priorChars, new_chars: response.truncation.newChars }
    : null,
  ...checklistField(response.plan?.checklist),
});

/** A revision's metadata, with its content only when `withContent`. */
export const revisionJson = (revision: PlanRevision | undefined, withContent = false) => ({
  id: revision?.id ?? "",
  number: revision?.revisionNumber ?? 0,
  title: revision?.title ?? "",
  author: { kind: authorKindName(revision?.authorKind ?? 0), name: revision?.authorName ?? "" },
  content_bytes: revision?.contentBytes ?? 0,
  content_chars: revision?.contentChars ?? 0,
  revert_of_revision_id: revision?.revertOfRevisionId ?? null,
  created_at: time(revision?.createdAt),
  updated_at: time(revision?.updatedAt),
  coalesced: isCoalesced(revision),
  revision_version: revision?.revisionVersion ?? "",
  merge: revision?.merge
    ? { from_version: revision.merge.fromVersion, to_version: revision.merge.toVersion }
    : null,
  ...checklistField(revision?.checklist),
  ...(withContent ? { content: revision?.content ?? "" } : {}),
});

/** A revision written again in place by a later write of the same author (its times differ). */
export function isCoalesced(revision: PlanRevision | undefined): boolean {
  return (revision?.updatedAt?.getTime() ?? 0) > (revision?.createdAt?.getTime() ?? 0);
}

export const diffJson = (diff: PlanDiff | undefined) => ({
  unified_diff: diff?.unifiedDiff ?? "",
  old_bytes: diff?.oldBytes ?? 0,
  new_bytes: diff?.newBytes ?? 0,
  lines_added: diff?.linesAdded ?? 0,
  lines_removed: diff?.linesRemoved ?? 0,
});

export { time as timeJson };
