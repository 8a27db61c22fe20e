import type { PlanEntity } from "./entities/plan.entity";
import type { RevisionEntity } from "./entities/revision.entity";
import type { TaskEntity } from "./entities/task.entity";
import type {
  AuthorKind,
  HeadRecord,
  RevisionMeta,
  RevisionRecord,
  TaskRecord,
} from "../plans/ports/records";
import { type CorruptContent, StorageCorruptionError } from "../plans/ports/store-errors";

/** Entity <-> record conversions; the only place that knows both shapes. */

export function taskFromEntity(row: TaskEntity): TaskRecord {
  return { id: row.id, workspaceId: row.workspaceId, title: row.title, createdAt: new Date(row.createdAt) };
}

export function taskToEntity(task: TaskRecord): TaskEntity {
  return {
    id: task.id,
    workspaceId: task.workspaceId,
    title: task.title,
    createdAt: task.createdAt.getTime(),
  };
}

export function headFromEntity(row: PlanEntity): HeadRecord {
  verifyContent(row.content, row.contentBytes, { taskId: row.taskId, row: "plan" });
  return {
    taskId: row.taskId,
    title: row.title,
    content: row.content,
    contentBytes: row.contentBytes,
    contentChars: row.contentChars,
    version: row.version,
    createdBy: authorKindOf(row.createdBy),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    latestRevisionNumber: row.latestRevisionNumber,
    deleted: row.deleted,
    implementationStartedAt:
      row.implementationStartedAt === null ? null : new Date(row.implementationStartedAt),
    implementationStartedBy: row.implementationStartedBy,
    implementationStartedSessionId: row.implementationStartedSessionId,
    trimmedChars: row.trimmedChars,
    trimmedBytes: row.trimmedBytes,
  };
}

export function revisionMetaFromEntity(row: Omit<RevisionEntity, "content">): RevisionMeta {
  return {
    id: row.id,
    taskId: row.taskId,
    number: row.revisionNumber,
    title: row.title,
    contentBytes: row.contentBytes,
    contentChars: row.contentChars,
    authorKind: authorKindOf(row.authorKind),
    authorName: row.authorName,
    revertOfRevisionId: row.revertOfRevisionId,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    rowVersion: row.rowVersion,
  };
}

export function revisionFromEntity(row: RevisionEntity): RevisionRecord {
  verifyContent(row.content, row.contentBytes, { taskId: row.taskId, row: `revision ${row.id}` });
  return { ...revisionMetaFromEntity(row), content: row.content };
}

function authorKindOf(value: string): AuthorKind {
  return value === "user" ? "user" : "agent";
}

// Content is stored with its UTF-8 size; a mismatch means the row was truncated or altered outside
// the service, and composing an append from it would silently lose text.
export function verifyContent(
  content: string,
  recordedBytes: number,
  what: Pick<CorruptContent, "taskId" | "row">,
): void {
  verifySize(Buffer.byteLength(content, "utf8"), recordedBytes, what);
}

/** The stored size (measured by the reader or the database) against the recorded one. */
export function verifySize(
  storedBytes: number,
  recordedBytes: number,
  what: Pick<CorruptContent, "taskId" | "row">,
): void {
  if (storedBytes !== recordedBytes)
    throw new StorageCorruptionError({ ...what, recordedBytes, storedBytes });
}
