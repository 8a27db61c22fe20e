import type { HeadRecord, RevisionRecord, TaskBundle, TaskExportPage, TaskRecord } from "../ports/records";
import { codePointLength, utf8Length } from "../../text/unicode";
import { planErrors } from "../errors";
import { limits } from "../rules/limits";
import { checkDisplayName, checkTitle, requireId } from "../rules/validate";

/**
 * Pure rules of export and import (issue 46): the snapshot token that binds an export's pages to
 * one version of the task, the checks an imported task must pass, and what "stored exactly as
 * imported" means.
 */

/** What names the version of a task an export page was read at (opaque base64url JSON). */
export function snapshotOf(page: Pick<TaskExportPage, "task" | "head" | "revisionCount">): string {
  const { task, head } = page;
  const state = {
    c: task.createdAt.getTime(),
    v: head?.version ?? 0,
    d: head?.deleted ?? false,
    s: head?.implementationStartedAt?.getTime() ?? null,
    n: page.revisionCount,
  };
  return Buffer.from(JSON.stringify(state), "utf8").toString("base64url");
}

/** ListTasks' page token: the last task id of the page, bound to the workspace filter. */
export function encodeTaskPageToken(afterId: string, workspaceId: string | null): string {
  return Buffer.from(JSON.stringify({ a: afterId, w: workspaceId }), "utf8").toString("base64url");
}

/** The id a ListTasks page starts after ("" for none); INVALID_FIELD for a token not of this filter. */
export function decodeTaskPageToken(token: string, workspaceId: string | null): string {
  if (token === "") return "";
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    decoded = null;
  }
  const { a, w } = (decoded ?? {}) as { a?: unknown; w?: unknown };
  if (typeof a !== "string" || w !== workspaceId)
    throw planErrors.invalidField("page_token", "is not a token this server issued for this listing");
  return a;
}

/** ListTasks' page size: 0 means 100, at most 1,000. */
export function taskPageSize(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 0)
    throw planErrors.invalidField("page_size", "must not be negative");
  return pageSize === 0 ? 100 : Math.min(pageSize, 1_000);
}

// Revision ids are stored in a 36-character column; the service issues UUIDs.
const MAX_REVISION_ID = 36;
const REVISION_ID = /^[A-Za-z0-9_-]+$/;

/**
 * Largest version an import may carry (HEAD's version, a revision's row version, a merge marker's
 * versions): 2^48. Every later write adds one, and a version must stay a safe integer (2^53 - 1) on
 * every client: 2^48 leaves 2^53 - 2^48 (about 8.7e15) writes of room.
 */
export const MAX_IMPORTED_VERSION = 2 ** 48;

// Times an import may carry: from the epoch to the end of year 9999 (protobuf Timestamp's range).
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** What one import may carry at most: its revisions and its plan text (content of HEAD and every revision). */
export interface ImportBounds {
  readonly maxRevisions: number;
  readonly maxBytes: number;
}

/** Bounds of an import where the history budget sets none (PLAN_HISTORY_MAX_* = 0). */
export const UNBUDGETED_IMPORT: ImportBounds = Object.freeze({
  maxRevisions: 100_000,
  maxBytes: 1024 * 1024 * 1024,
});

/**
 * The bounds of one import: the deployment's history budget (as one write is held to it), each
 * measure capped by UNBUDGETED_IMPORT where the budget has none, so that what an import stream may
 * make the server hold is bounded whatever the configuration.
 */
export function importBounds(budget: { maxRevisions: number; maxBytes: number }): ImportBounds {
  return {
    maxRevisions: budget.maxRevisions > 0 ? budget.maxRevisions : UNBUDGETED_IMPORT.maxRevisions,
    maxBytes: budget.maxBytes > 0 ? budget.maxBytes : UNBUDGETED_IMPORT.maxBytes,
  };
}

/** INVALID_FIELD unless `value` is an integer from `min` to MAX_IMPORTED_VERSION. */
export function checkImportedVersion(field: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > MAX_IMPORTED_VERSION)
    throw planErrors.invalidField(field, `must be an integer from ${min} to ${MAX_IMPORTED_VERSION} (2^48)`);
}

/** INVALID_FIELD unless `value` is a time from 1970 to the end of year 9999. */
export function checkImportedTime(field: string, value: Date): void {
  const time = value.getTime();
  if (!Number.isFinite(time) || time < 0 || time > LATEST_TIME)
    throw planErrors.invalidField(field, "must be a time from 1970 to 9999");
}

/** The task of an import's first message, held to the rules of CreateTask (ids and title). */
export function checkImportedTask(task: TaskRecord): void {
  requireId("start.task.task_id", task.id);
  requireId("start.task.workspace_id", task.workspaceId);
  checkTitle("start.task.title", task.title);
  checkImportedTime("start.task.created_at", task.createdAt);
}

/**
 * HEAD of an import's first message, each field held to the rule of the write that sets it: title,
 * content size and its recorded sizes, version (MAX_IMPORTED_VERSION), times, and the
 * implementation-started mark (all three set, or none; session id as MarkImplementationStarted's,
 * actor as a display name).
 */
export function checkImportedHead(head: HeadRecord, task: TaskRecord): void {
  const invalid = (problem: string) => planErrors.importInvalid(task.id, problem);
  if (head.taskId !== task.id) throw invalid(`the plan belongs to task ${head.taskId}`);
  checkTitle("start.head.plan.title", head.title);
  checkContent(head, "the plan", invalid);
  checkImportedVersion("start.head.plan.version", head.version, 1);
  checkImportedTime("start.head.plan.created_at", head.createdAt);
  checkImportedTime("start.head.plan.updated_at", head.updatedAt);
  const { implementationStartedAt: at, implementationStartedBy: by } = head;
  const sessionId = head.implementationStartedSessionId;
  if ((at === null) !== (sessionId === null) || (at === null) !== (by === null))
    throw invalid("the implementation-started mark is incomplete (time, actor and session go together)");
  if (at !== null) checkImportedTime("start.head.plan.implementation_started_at", at);
  if (sessionId !== null) requireId("start.head.plan.implementation_started_session_id", sessionId);
  if (by !== null) checkDisplayName("start.head.plan.implementation_started_by", by);
}

/**
 * One revision of an import as it arrives (the `index`-th of the stream, from 0), held to the rules
 * of the write that made it: numbered in order, of this task, an id as the service issues them
 * (unique in the task), title, author name, content size and recorded sizes, row version and merge
 * marker (MAX_IMPORTED_VERSION), times, a revert marker naming an earlier revision (`earlierIds`).
 */
export function checkImportedRevision(
  revision: RevisionRecord,
  index: number,
  taskId: string,
  earlierIds: ReadonlySet<string>,
): void {
  const invalid = (problem: string) => planErrors.importInvalid(taskId, problem);
  const at = `revision ${index + 1}`;
  const field = (name: string) => `revisions[${index}].revision.${name}`;
  if (revision.number !== index + 1) throw invalid(`${at} is numbered ${revision.number}`);
  if (revision.taskId !== taskId) throw invalid(`${at} belongs to task ${revision.taskId}`);
  requireId(field("id"), revision.id);
  if (revision.id.length > MAX_REVISION_ID || !REVISION_ID.test(revision.id))
    throw planErrors.invalidField(
      field("id"),
      `must be at most ${MAX_REVISION_ID} letters, digits, "-" or "_" (as the service issues them)`,
    );
  if (earlierIds.has(revision.id)) throw invalid(`${at} repeats the id of an earlier revision`);
  checkTitle(field("title"), revision.title);
  checkDisplayName(field("author_name"), revision.authorName);
  checkContent(revision, at, invalid);
  checkImportedVersion(`revisions[${index}].row_version`, revision.rowVersion, 1);
  if (revision.merge) {
    checkImportedVersion(field("merge.from_version"), revision.merge.fromVersion, 0);
    checkImportedVersion(field("merge.to_version"), revision.merge.toVersion, 0);
  }
  checkImportedTime(field("created_at"), revision.createdAt);
  checkImportedTime(field("updated_at"), revision.updatedAt);
  if (revision.revertOfRevisionId !== null && !earlierIds.has(revision.revertOfRevisionId))
    throw invalid(`${at} reverts a revision that is not an earlier one of the task`);
}

/**
 * Checks what only the whole import shows (IMPORT_INVALID naming the first problem): the declared
 * count arrived, and HEAD points at the newest revision with its content. Each part was checked as
 * it arrived (checkImportedTask, checkImportedHead, checkImportedRevision).
 */
export function checkBundle(bundle: TaskBundle, declaredCount: number): void {
  const { task, head, revisions } = bundle;
  const invalid = (problem: string) => planErrors.importInvalid(task.id, problem);
  if (revisions.length !== declaredCount)
    throw invalid(`${revisions.length} revisions arrived, ${declaredCount} were declared`);
  if (head === null) {
    if (revisions.length > 0) throw invalid("revisions arrived without a plan");
    return;
  }
  if (head.latestRevisionNumber !== revisions.length)
    throw invalid(`the plan's newest revision is ${head.latestRevisionNumber}, ${revisions.length} arrived`);
  const newest = revisions[revisions.length - 1];
  if (!head.deleted && newest !== undefined && newest.content !== head.content)
    throw invalid("the plan's content is not its newest revision's");
}

function checkContent(
  record: Pick<RevisionRecord, "content" | "contentBytes" | "contentChars">,
  at: string,
  invalid: (problem: string) => Error,
): void {
  const bytes = utf8Length(record.content);
  if (bytes !== record.contentBytes || codePointLength(record.content) !== record.contentChars)
    throw invalid(`${at}'s content does not have its recorded size`);
  if (bytes > limits.maxPlanBytes) throw invalid(`${at} is larger than ${limits.maxPlanBytes} bytes`);
}
