import { createHash } from "node:crypto";
import {
  AuthorKind,
  type ExportedHead,
  type ExportedRevision,
  type ImportTaskRequest,
  type PartialRequest,
  type Task,
} from "@taskplans/client";
import { safeJson } from "../terminal-text";

/**
 * The export file (docs/planctl.md, "Export file format"): line-delimited JSON, one record per
 * line. Line 1 is the header; then, per task, a `task` line (the task and its HEAD), one `revision`
 * line per revision in number order, and an `end` line with the revision count and the SHA-256 of
 * the task's lines before it; the last line is `end-of-export`. Strings are escaped by safeJson
 * (control characters and U+2028/U+2029 as \uXXXX), so a line never contains a raw line break and
 * JSON.parse gives back every byte.
 */
export const FORMAT = "planctl-export";
export const FORMAT_VERSION = 1;

export interface Header {
  readonly type: "header";
  readonly format: typeof FORMAT;
  readonly version: number;
  readonly exported_at: string;
  /** Tasks the file holds (for progress; the `end-of-export` line confirms it). */
  readonly tasks: number;
}

export interface HeadJson {
  readonly title: string;
  readonly content: string;
  readonly content_bytes: number;
  readonly content_chars: number;
  readonly version: number;
  readonly created_by: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly latest_revision_number: number;
  readonly deleted: boolean;
  readonly implementation_started_at: string | null;
  readonly implementation_started_by: string | null;
  readonly implementation_started_session_id: string | null;
}

export interface TaskLine {
  readonly type: "task";
  readonly task_id: string;
  readonly workspace_id: string;
  readonly title: string;
  readonly created_at: string;
  readonly head: HeadJson | null;
  readonly revision_count: number;
}

export interface RevisionLine {
  readonly type: "revision";
  readonly task_id: string;
  readonly id: string;
  readonly number: number;
  readonly title: string;
  readonly content: string;
  readonly content_bytes: number;
  readonly content_chars: number;
  readonly author_kind: "agent" | "user";
  readonly author_name: string;
  readonly revert_of: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly row_version: number;
  readonly merge: { readonly from_version: number; readonly to_version: number } | null;
}

export interface EndLine {
  readonly type: "end";
  readonly task_id: string;
  readonly revisions: number;
  readonly sha256: string;
}

export interface TrailerLine {
  readonly type: "end-of-export";
  readonly tasks: number;
}

/** One line of the file, with its newline. */
export const line = (record: object): string => `${safeJson(record)}\n`;

export function headerLine(tasks: number, now: Date): string {
  const header: Header = {
    type: "header",
    format: FORMAT,
    version: FORMAT_VERSION,
    exported_at: now.toISOString(),
    tasks,
  };
  return line(header);
}

const iso = (date: Date | undefined): string => (date ?? new Date(0)).toISOString();
const isoOrNull = (date: Date | undefined): string | null => (date ? date.toISOString() : null);

export function taskLine(task: Task, head: ExportedHead | undefined, revisionCount: number): TaskLine {
  const plan = head?.plan;
  return {
    type: "task",
    task_id: task.taskId,
    workspace_id: task.workspaceId,
    title: task.title,
    created_at: iso(task.createdAt),
    head:
      head && plan
        ? {
            title: plan.title,
            content: plan.content,
            content_bytes: plan.contentBytes,
            content_chars: plan.contentChars,
            version: plan.version,
            created_by: plan.createdBy,
            created_at: iso(plan.createdAt),
            updated_at: iso(plan.updatedAt),
            latest_revision_number: plan.latestRevisionNumber,
            deleted: head.deleted,
            implementation_started_at: isoOrNull(plan.implementationStartedAt),
            implementation_started_by: plan.implementationStartedBy ?? null,
            implementation_started_session_id: plan.implementationStartedSessionId ?? null,
          }
        : null,
    revision_count: revisionCount,
  };
}

export function revisionLine(exported: ExportedRevision): RevisionLine {
  const r = exported.revision;
  if (!r) throw new Error("the service sent an exported revision without its revision");
  return {
    type: "revision",
    task_id: r.taskId,
    id: r.id,
    number: r.revisionNumber,
    title: r.title,
    content: r.content,
    content_bytes: r.contentBytes,
    content_chars: r.contentChars,
    author_kind: r.authorKind === AuthorKind.AUTHOR_KIND_USER ? "user" : "agent",
    author_name: r.authorName,
    revert_of: r.revertOfRevisionId ?? null,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
    row_version: exported.rowVersion,
    merge: r.merge ? { from_version: r.merge.fromVersion, to_version: r.merge.toVersion } : null,
  };
}

/** The running checksum of one task's lines (its `task` line and its `revision` lines, newlines included). */
export class TaskChecksum {
  private readonly hash = createHash("sha256");
  add(text: string): void {
    this.hash.update(text, "utf8");
  }
  hex(): string {
    return this.hash.digest("hex");
  }
}

export function endLine(taskId: string, revisions: number, sha256: string): string {
  const end: EndLine = { type: "end", task_id: taskId, revisions, sha256 };
  return line(end);
}

export function trailerLine(tasks: number): string {
  const trailer: TrailerLine = { type: "end-of-export", tasks };
  return line(trailer);
}

// ---- reading -------------------------------------------------------------------------------

/** A problem with the file at a line (1-based). */
export class DamagedLine extends Error {
  constructor(
    readonly lineNumber: number,
    problem: string,
  ) {
    super(`line ${lineNumber}: ${problem}`);
  }
}

/** A time field as written (RFC 3339), or the damage it is. */
function dateOf(value: unknown, field: string, at: number): Date {
  const date = typeof value === "string" ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw new DamagedLine(at, `${field} is not a time`);
  return date;
}

function need(condition: boolean, at: number, problem: string): void {
  if (!condition) throw new DamagedLine(at, problem);
}

const isText = (value: unknown): value is string => typeof value === "string";
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** The header line, checked (format and a version this program reads). */
export function readHeader(record: Record<string, unknown>, at: number): Header {
  need(record.type === "header" && record.format === FORMAT, at, `not a ${FORMAT} file (no header line)`);
  need(
    record.version === FORMAT_VERSION,
    at,
    `format version ${String(record.version)} is not one this planctl reads (${FORMAT_VERSION})`,
  );
  return record as unknown as Header;
}

/** The `start` message of a task's import, from its `task` line. */
export function startOf(
  record: Record<string, unknown>,
  at: number,
  options: { overwrite: boolean; dryRun: boolean },
): { taskId: string; revisionCount: number; request: PartialRequest<ImportTaskRequest> } {
  need(
    isText(record.task_id) && isText(record.workspace_id) && isText(record.title),
    at,
    "a task line lacks its ids or title",
  );
  need(isCount(record.revision_count), at, "revision_count is not a count");
  const taskId = record.task_id as string;
  const head = record.head as Record<string, unknown> | null | undefined;
  need(
    head === null || (typeof head === "object" && head !== undefined),
    at,
    "head is neither null nor an object",
  );
  let exportedHead: PartialRequest<ExportedHead> | undefined;
  if (head) {
    need(
      isText(head.title) && isText(head.content) && isText(head.created_by),
      at,
      "the head lacks its text fields",
    );
    need(
      isCount(head.content_bytes) &&
        isCount(head.content_chars) &&
        isCount(head.version) &&
        isCount(head.latest_revision_number),
      at,
      "the head's counts are not counts",
    );
    need(typeof head.deleted === "boolean", at, "the head's deleted flag is not a boolean");
    exportedHead = {
      plan: {
        taskId,
        title: head.title as string,
        content: head.content as string,
        contentBytes: head.content_bytes as number,
        contentChars: head.content_chars as number,
        version: head.version as number,
        createdBy: head.created_by as string,
        createdAt: dateOf(head.created_at, "head.created_at", at),
        updatedAt: dateOf(head.updated_at, "head.updated_at", at),
        latestRevisionNumber: head.latest_revision_number as number,
        implementationStartedAt:
          head.implementation_started_at === null
            ? undefined
            : dateOf(head.implementation_started_at, "head.implementation_started_at", at),
        implementationStartedBy: isText(head.implementation_started_by)
          ? head.implementation_started_by
          : undefined,
        implementationStartedSessionId: isText(head.implementation_started_session_id)
          ? head.implementation_started_session_id
          : undefined,
      },
      deleted: head.deleted as boolean,
    };
  }
  return {
    taskId,
    revisionCount: record.revision_count as number,
    request: {
      start: {
        task: {
          taskId,
          workspaceId: record.workspace_id as string,
          title: record.title as string,
          createdAt: dateOf(record.created_at, "created_at", at),
        },
        head: exportedHead,
        revisionCount: record.revision_count as number,
        overwrite: options.overwrite,
        dryRun: options.dryRun,
      },
    },
  };
}

/** An ExportedRevision from a `revision` line of task `taskId`. */
export function revisionOf(
  record: Record<string, unknown>,
  taskId: string,
  at: number,
): PartialRequest<ExportedRevision> {
  need(record.task_id === taskId, at, `a revision of task ${String(record.task_id)} inside task ${taskId}`);
  need(
    isText(record.id) && isText(record.title) && isText(record.content) && isText(record.author_name),
    at,
    "a revision lacks its text fields",
  );
  need(
    isCount(record.number) &&
      isCount(record.content_bytes) &&
      isCount(record.content_chars) &&
      isCount(record.row_version),
    at,
    "a revision's counts are not counts",
  );
  need(
    record.author_kind === "agent" || record.author_kind === "user",
    at,
    "author_kind is neither agent nor user",
  );
  need(record.revert_of === null || isText(record.revert_of), at, "revert_of is neither null nor an id");
  const merge = record.merge as { from_version?: unknown; to_version?: unknown } | null;
  need(
    merge === null || (typeof merge === "object" && isCount(merge.from_version) && isCount(merge.to_version)),
    at,
    "merge is neither null nor a marker",
  );
  return {
    revision: {
      id: record.id as string,
      taskId,
      revisionNumber: record.number as number,
      title: record.title as string,
      content: record.content as string,
      contentBytes: record.content_bytes as number,
      contentChars: record.content_chars as number,
      authorKind: record.author_kind === "user" ? AuthorKind.AUTHOR_KIND_USER : AuthorKind.AUTHOR_KIND_AGENT,
      authorName: record.author_name as string,
      revertOfRevisionId: (record.revert_of as string | null) ?? undefined,
      createdAt: dateOf(record.created_at, "created_at", at),
      updatedAt: dateOf(record.updated_at, "updated_at", at),
      merge: merge
        ? { fromVersion: merge.from_version as number, toVersion: merge.to_version as number }
        : undefined,
    },
    rowVersion: record.row_version as number,
  };
}
