import type { RestoreResult, WriteResult } from "../../plans/plan-service";
import type {
  AuthorKind as DomainAuthorKind,
  ChecklistProgress,
  HeadRecord,
  MergeMarker,
  MergeMethod,
  RevisionMeta,
  RevisionRecord,
  TaskRecord,
} from "../../plans/ports/records";
import {
  type Author,
  AuthorKind,
  type ChecklistProgress as ChecklistMessage,
  type MergeMarker as MergeMarkerMessage,
  MergeMethod as MergeMethodMessage,
  type Plan,
  type PlanRevision,
  WriteMode,
} from "@taskplans/contract";
import type { RequestedAuthor } from "../../plans/rules/author";
import { planErrors } from "../../plans/errors";
import {
  type GetPlanResponse,
  RestoreStatus,
  type RestorePlanRevisionResponse,
  type WritePlanResponse,
} from "@taskplans/contract";
import type { PlanSummary } from "../../plans/pipeline/events";
import type { ContentRange } from "../../plans/rules/partial-read";
import { revisionVersion } from "../../plans/rules/revision-version";
import type { Task } from "@taskplans/contract";

/** Domain records -> proto messages. */

/** A task, with its plan's checklist progress when the read joined it (ListTasks, GetTask). */
export function encodeTask(task: TaskRecord & { readonly checklist?: ChecklistProgress | null }): Task {
  return {
    taskId: task.id,
    workspaceId: task.workspaceId,
    title: task.title,
    createdAt: task.createdAt,
    checklist: encodeChecklist(task.checklist),
  };
}

/** A checklist's progress on the wire (absent when it was not counted). */
function encodeChecklist(checklist: ChecklistProgress | null | undefined): ChecklistMessage | undefined {
  return checklist ? { checked: checklist.checked, total: checklist.total } : undefined;
}

/** A plan; `withContent: false` for write acknowledgements, which must not grow with the document. */
export function encodePlan(head: PlanSummary & { content?: string }, withContent: boolean): Plan {
  return {
    taskId: head.taskId,
    title: head.title,
    content: withContent ? (head.content ?? "") : "",
    contentBytes: head.contentBytes,
    contentChars: head.contentChars,
    version: head.version,
    createdBy: head.createdBy,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    latestRevisionNumber: head.latestRevisionNumber,
    implementationStartedAt: head.implementationStartedAt ?? undefined,
    implementationStartedBy: head.implementationStartedBy ?? undefined,
    implementationStartedSessionId: head.implementationStartedSessionId ?? undefined,
    checklist: encodeChecklist(head.checklist),
  };
}

export function encodeRevision(revision: RevisionMeta | RevisionRecord): PlanRevision {
  return {
    id: revision.id,
    taskId: revision.taskId,
    revisionNumber: revision.number,
    title: revision.title,
    content: "content" in revision ? revision.content : "",
    contentBytes: revision.contentBytes,
    contentChars: revision.contentChars,
    authorKind: encodeAuthorKind(revision.authorKind),
    authorName: revision.authorName,
    revertOfRevisionId: revision.revertOfRevisionId ?? undefined,
    createdAt: revision.createdAt,
    updatedAt: revision.updatedAt,
    revisionVersion: revisionVersion(revision),
    merge: encodeMergeMarker(revision.merge),
    checklist: encodeChecklist(revision.checklist),
  };
}

export function encodeRange(plan: HeadRecord, range: ContentRange): GetPlanResponse {
  return {
    plan: { ...encodePlan(plan, false), content: range.content },
    totalChars: range.totalChars,
    totalBytes: plan.contentBytes,
    nextOffset: range.nextOffset ?? undefined,
    hasMore: range.hasMore,
  };
}

export function encodeRestoreResult(result: RestoreResult): RestorePlanRevisionResponse {
  return {
    status:
      result.status === "restored"
        ? RestoreStatus.RESTORE_STATUS_RESTORED
        : RestoreStatus.RESTORE_STATUS_ALREADY_CURRENT,
    plan: encodePlan(result.plan, false),
    revision: result.revision ?? undefined,
    priorRevisionNumber: result.priorRevisionNumber ?? undefined,
  };
}

export function encodeWriteResult(result: WriteResult): WritePlanResponse {
  return {
    plan: encodePlan(result.plan, false),
    revision: result.revision,
    truncation: result.truncation ?? undefined,
    merge: encodeMergeMarker(result.merge),
    mergeMethod: result.mergeMethod ? MERGE_METHOD[result.mergeMethod] : undefined,
  };
}

const MERGE_METHOD: Readonly<Record<MergeMethod, MergeMethodMessage>> = {
  lines: MergeMethodMessage.MERGE_METHOD_LINES,
  edit: MergeMethodMessage.MERGE_METHOD_EDIT_REAPPLIED,
};

export function encodeAuthorKind(kind: DomainAuthorKind): AuthorKind {
  return kind === "agent" ? AuthorKind.AUTHOR_KIND_AGENT : AuthorKind.AUTHOR_KIND_USER;
}

/** Proto author -> domain; unspecified kind leaves the path default, an unknown number is INVALID_FIELD. */
export function decodeAuthor(author: Author | undefined): RequestedAuthor | undefined {
  if (author === undefined) return undefined;
  if (author.kind === AuthorKind.AUTHOR_KIND_AGENT) return { kind: "agent", name: author.name };
  if (author.kind === AuthorKind.AUTHOR_KIND_USER) return { kind: "user", name: author.name };
  if (author.kind === AuthorKind.AUTHOR_KIND_UNSPECIFIED) return { name: author.name };
  throw planErrors.invalidField("author.kind", `unknown AuthorKind ${author.kind}`);
}

/** Proto write mode -> the mode string the rules parse ("" unspecified; unknown numbers kept visible). */
export function decodeWriteMode(mode: WriteMode): string {
  if (mode === WriteMode.WRITE_MODE_UNSPECIFIED) return "";
  if (mode === WriteMode.WRITE_MODE_REPLACE) return "replace";
  if (mode === WriteMode.WRITE_MODE_APPEND) return "append";
  return String(mode);
}

/** A merged write's marker on the wire (absent when it did not merge). */
function encodeMergeMarker(merge: MergeMarker | null | undefined): MergeMarkerMessage | undefined {
  return merge ? { fromVersion: merge.fromVersion, toVersion: merge.toVersion } : undefined;
}
