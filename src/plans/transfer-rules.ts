import type { HeadRecord, RevisionRecord, TaskBundle, TaskExportPage } from "./ports/records";
import { codePointLength, utf8Length } from "../text/unicode";
import { planErrors } from "./errors";
import { limits } from "./limits";
import { isWellFormedId } from "./validate";

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

// Revision ids are stored in a 36-character column.
const MAX_REVISION_ID = 36;

/**
 * Checks that `bundle` is one consistent task (IMPORT_INVALID naming the first problem): ids,
 * revisions numbered 1..n in order with the declared count, sizes that match their contents, each
 * content within the plan size limit, revert markers naming a revision of the task, and HEAD
 * pointing at the newest revision with its content.
 */
export function checkBundle(bundle: TaskBundle, declaredCount: number): void {
  const { task, head, revisions } = bundle;
  const invalid = (problem: string) => planErrors.importInvalid(task.id, problem);
  if (!isWellFormedId(task.workspaceId)) throw invalid("the workspace id is not a well-formed id");
  if (Number.isNaN(task.createdAt.getTime())) throw invalid("the task has no creation time");
  if (revisions.length !== declaredCount)
    throw invalid(`${revisions.length} revisions arrived, ${declaredCount} were declared`);
  const ids = new Set<string>();
  revisions.forEach((revision, index) => {
    const at = `revision ${index + 1}`;
    if (revision.number !== index + 1) throw invalid(`${at} is numbered ${revision.number}`);
    if (revision.taskId !== task.id) throw invalid(`${at} belongs to task ${revision.taskId}`);
    if (revision.id === "" || revision.id.length > MAX_REVISION_ID || ids.has(revision.id))
      throw invalid(`${at} has a missing, too long or repeated id`);
    ids.add(revision.id);
    checkContent(revision, at, invalid);
    if (revision.rowVersion < 1) throw invalid(`${at} has row version ${revision.rowVersion}`);
    if (revision.revertOfRevisionId !== null && !ids.has(revision.revertOfRevisionId))
      throw invalid(`${at} reverts a revision that is not an earlier one of the task`);
  });
  if (head === null) {
    if (revisions.length > 0) throw invalid("revisions arrived without a plan");
    return;
  }
  if (head.taskId !== task.id) throw invalid(`the plan belongs to task ${head.taskId}`);
  checkContent(head, "the plan", invalid);
  if (head.latestRevisionNumber !== revisions.length)
    throw invalid(`the plan's newest revision is ${head.latestRevisionNumber}, ${revisions.length} arrived`);
  const newest = revisions[revisions.length - 1];
  if (!head.deleted && newest !== undefined && newest.content !== head.content)
    throw invalid("the plan's content is not its newest revision's");
  if (head.version < 1) throw invalid("the plan has no version");
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

/** True when `stored` is exactly `imported`: every field of the task, HEAD and each revision, every byte. */
export function sameTask(stored: TaskBundle, imported: TaskBundle): boolean {
  return JSON.stringify(canonical(stored)) === JSON.stringify(canonical(imported));
}

function canonical(bundle: TaskBundle): unknown {
  const { task, head, revisions } = bundle;
  return [
    [task.id, task.workspaceId, task.title, task.createdAt.getTime()],
    head === null ? null : canonicalHead(head),
    revisions.map((r) => [
      r.id,
      r.number,
      r.title,
      r.content,
      r.contentBytes,
      r.contentChars,
      r.authorKind,
      r.authorName,
      r.revertOfRevisionId,
      r.createdAt.getTime(),
      r.updatedAt.getTime(),
      r.rowVersion,
      r.merge ? [r.merge.fromVersion, r.merge.toVersion] : null,
    ]),
  ];
}

function canonicalHead(head: HeadRecord): unknown {
  return [
    head.title,
    head.content,
    head.version,
    head.createdBy,
    head.createdAt.getTime(),
    head.updatedAt.getTime(),
    head.latestRevisionNumber,
    head.deleted,
    head.implementationStartedAt?.getTime() ?? null,
    head.implementationStartedBy,
    head.implementationStartedSessionId,
  ];
}
