import {
  AuthorKind,
  type ExportedHead,
  type ExportedRevision,
  type ExportTaskResponse,
  ImportOutcome,
  type Task,
} from "@taskplans/contract";
import { planErrors } from "../../plans/errors";
import type {
  HeadRecord,
  ImportOutcome as DomainImportOutcome,
  RevisionRecord,
  TaskExportPage,
  TaskRecord,
} from "../../plans/ports/records";
import { encodePlan, encodeRevision, encodeTask } from "./encode";

/** Export and import (issue 46): domain records <-> the proto messages that carry a whole task. */

export function encodeExportPage(page: TaskExportPage & { readonly snapshot: string }): ExportTaskResponse {
  return {
    task: encodeTask(page.task),
    head: page.head === null ? undefined : encodeHead(page.head),
    revisions: page.revisions.map(encodeExportedRevision),
    more: page.more,
    snapshot: page.snapshot,
    revisionCount: page.revisionCount,
  };
}

// An export carries no checklist progress: it is derived from the content, and the importing
// deployment counts it (plans/transfer/task-transfer.ts), so an export of an import is the export.
function encodeHead(head: HeadRecord): ExportedHead {
  return { plan: { ...encodePlan(head, true), checklist: undefined }, deleted: head.deleted };
}

function encodeExportedRevision(revision: RevisionRecord): ExportedRevision {
  return { revision: { ...encodeRevision(revision), checklist: undefined }, rowVersion: revision.rowVersion };
}

export function encodeImportOutcome(outcome: DomainImportOutcome): ImportOutcome {
  if (outcome === "created") return ImportOutcome.IMPORT_OUTCOME_CREATED;
  if (outcome === "unchanged") return ImportOutcome.IMPORT_OUTCOME_UNCHANGED;
  return ImportOutcome.IMPORT_OUTCOME_OVERWRITTEN;
}

// A required time of an imported record (INVALID_FIELD naming it when absent).
function time(field: string, value: Date | undefined): Date {
  if (value === undefined || Number.isNaN(value.getTime()))
    throw planErrors.invalidField(field, "is required");
  return value;
}

export function decodeImportedTask(task: Task | undefined): TaskRecord {
  if (task === undefined) throw planErrors.invalidField("start.task", "is required");
  return {
    id: task.taskId,
    workspaceId: task.workspaceId,
    title: task.title,
    createdAt: time("start.task.created_at", task.createdAt),
  };
}

export function decodeImportedHead(head: ExportedHead | undefined): HeadRecord | null {
  if (head === undefined) return null;
  const { plan } = head;
  if (plan === undefined) throw planErrors.invalidField("start.head.plan", "is required");
  const kind = plan.createdBy;
  if (kind !== "agent" && kind !== "user")
    throw planErrors.invalidField("start.head.plan.created_by", 'must be "agent" or "user"');
  return {
    taskId: plan.taskId,
    title: plan.title,
    content: plan.content,
    contentBytes: plan.contentBytes,
    contentChars: plan.contentChars,
    version: plan.version,
    createdBy: kind,
    createdAt: time("start.head.plan.created_at", plan.createdAt),
    updatedAt: time("start.head.plan.updated_at", plan.updatedAt),
    latestRevisionNumber: plan.latestRevisionNumber,
    // Counted by this deployment, not taken from the export (null: at the plan's next write).
    checklist: null,
    deleted: head.deleted,
    implementationStartedAt: plan.implementationStartedAt ?? null,
    implementationStartedBy: plan.implementationStartedBy ?? null,
    implementationStartedSessionId: plan.implementationStartedSessionId ?? null,
  };
}

export function decodeImportedRevision(exported: ExportedRevision): RevisionRecord {
  const { revision } = exported;
  if (revision === undefined) throw planErrors.invalidField("revisions.revision", "is required");
  const kind = revision.authorKind;
  if (kind !== AuthorKind.AUTHOR_KIND_AGENT && kind !== AuthorKind.AUTHOR_KIND_USER)
    throw planErrors.invalidField("revisions.revision.author_kind", "must be agent or user");
  return {
    id: revision.id,
    taskId: revision.taskId,
    number: revision.revisionNumber,
    title: revision.title,
    content: revision.content,
    contentBytes: revision.contentBytes,
    contentChars: revision.contentChars,
    authorKind: kind === AuthorKind.AUTHOR_KIND_USER ? "user" : "agent",
    authorName: revision.authorName,
    revertOfRevisionId: revision.revertOfRevisionId ?? null,
    createdAt: time("revisions.revision.created_at", revision.createdAt),
    updatedAt: time("revisions.revision.updated_at", revision.updatedAt),
    rowVersion: exported.rowVersion,
    merge: revision.merge
      ? { fromVersion: revision.merge.fromVersion, toVersion: revision.merge.toVersion }
      : null,
  };
}
