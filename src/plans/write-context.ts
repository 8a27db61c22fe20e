import type {
  ChangeRecord,
  ContentChange,
  HeadWrite,
  LockedHead,
  LockedRevision,
  RevisionMeta,
} from "./ports/records";
import type { Author } from "./author";
import { contentChange } from "./changes";
import { shouldCoalesce } from "./coalesce";
import type { PlanEvent } from "./events";
import { revisionMeta, summarize } from "./events";
import { limits } from "./limits";
import { codePointLength, trimTrailingWhitespace, utf8Length } from "./text";

/**
 * What a write reads inside the serialized region (the same read the commit is fenced on). Contents
 * are read by every write but an append, which composes in the database (contentOf refuses a
 * content that was not read).
 */
export interface WriteState {
  readonly taskId: string;
  /** HEAD row, tombstone included; null when the task never had a plan. */
  readonly head: LockedHead | null;
  /** Newest revision of the task; its number is MAX(revision_number). */
  readonly latest: LockedRevision | null;
}

/** The content of a HEAD or revision read under the lock; a write that needs it read it. */
export function contentOf(row: { readonly content: string | null }): string {
  if (row.content === null) throw new Error("the write did not read the content it needs");
  return row.content;
}

/** The content a write stores, with the sizes HEAD records for it. */
export interface StoredContent {
  readonly change: ContentChange;
  readonly bytes: number;
  readonly chars: number;
  /** Sizes of the content without its trailing whitespace (what the next append keeps). */
  readonly trimmedBytes: number;
  readonly trimmedChars: number;
}

/** A whole new text, measured. */
export function wholeContent(text: string): StoredContent {
  const bytes = utf8Length(text);
  const chars = codePointLength(text);
  const trailing = text.slice(trimTrailingWhitespace(text).length);
  return {
    change: text,
    bytes,
    chars,
    trimmedBytes: bytes - utf8Length(trailing),
    trimmedChars: chars - codePointLength(trailing),
  };
}

/** Inputs of a write that are not in the request: time, settings, id generation. */
export interface WriteEnv {
  readonly now: Date;
  readonly coalesceWindowMs: number;
  readonly newId: () => string;
}

/**
 * What a write commits: HEAD (fenced on the version read), one revision insert or in-place update.
 * The revision's content is the HEAD content of the same transaction (storage copies it).
 */
export interface WriteDecision {
  readonly head: HeadWrite;
  /** Version the HEAD update is fenced on; null inserts the first HEAD row. */
  readonly fenceVersion: number | null;
  readonly revision: RevisionMeta;
  /** Row version the in-place revision update is fenced on; null inserts a new revision. */
  readonly coalescedFrom: number | null;
  /** Content bytes of the revision rewritten in place (coalescing); null for a new revision. */
  readonly replacedBytes: number | null;
  readonly truncation: Truncation | null;
  readonly events: readonly PlanEvent[];
  /** The change the write records in its transaction (WatchPlan). */
  readonly change: ChangeRecord;
}

/** Reported when an acknowledged reduction was stored. */
export interface Truncation {
  readonly priorChars: number;
  readonly newChars: number;
  readonly priorRevisionNumber: number;
}

/** The live plan (null when absent or deleted). */
export function livePlan(state: WriteState): LockedHead | null {
  return state.head && !state.head.deleted ? state.head : null;
}

/**
 * Builds the commit of a content write: the new HEAD (next version, never reused), and either a
 * new revision numbered MAX+1 or the newest revision updated in place (coalescing).
 */
export function commitContent(
  state: WriteState,
  env: WriteEnv,
  write: {
    readonly title: string | undefined;
    readonly content: StoredContent;
    readonly author: Author;
    readonly forceNewRevision: boolean;
    readonly revertOfRevisionId: string | null;
    readonly truncation: Truncation | null;
  },
): WriteDecision {
  const live = livePlan(state);
  const { latest } = state;
  const title = write.title || live?.title || limits.defaultTitle;
  const { bytes: contentBytes, chars: contentChars } = write.content;
  const coalesce =
    latest !== null &&
    live !== null &&
    shouldCoalesce({
      latest,
      author: write.author,
      now: env.now,
      windowMs: env.coalesceWindowMs,
      forceNew: write.forceNewRevision,
    });
  const revision: RevisionMeta = coalesce
    ? {
        ...revisionMeta(latest),
        title,
        contentBytes,
        contentChars,
        updatedAt: env.now,
        rowVersion: latest.rowVersion + 1,
      }
    : {
        id: env.newId(),
        taskId: state.taskId,
        number: (latest?.number ?? 0) + 1,
        title,
        contentBytes,
        contentChars,
        authorKind: write.author.kind,
        authorName: write.author.name,
        revertOfRevisionId: write.revertOfRevisionId,
        createdAt: env.now,
        updatedAt: env.now,
        rowVersion: 1,
      };
  const head: HeadWrite = {
    taskId: state.taskId,
    title,
    content: write.content.change,
    contentBytes,
    contentChars,
    trimmedBytes: write.content.trimmedBytes,
    trimmedChars: write.content.trimmedChars,
    version: (state.head?.version ?? 0) + 1,
    createdBy: live?.createdBy ?? write.author.kind,
    createdAt: live?.createdAt ?? env.now,
    updatedAt: env.now,
    latestRevisionNumber: revision.number,
    deleted: false,
    implementationStartedAt: live?.implementationStartedAt ?? null,
    implementationStartedBy: live?.implementationStartedBy ?? null,
    implementationStartedSessionId: live?.implementationStartedSessionId ?? null,
  };
  const events: PlanEvent[] = [
    { type: live ? "plan.updated" : "plan.created", plan: summarize(head) },
    { type: "plan.revision.created", revision: revisionMeta(revision), coalesced: coalesce },
  ];
  if (write.revertOfRevisionId !== null)
    events.push({ type: "plan.reverted", revision: revisionMeta(revision) });
  return {
    head,
    fenceVersion: state.head?.version ?? null,
    revision,
    coalescedFrom: coalesce ? latest.rowVersion : null,
    replacedBytes: coalesce ? latest.contentBytes : null,
    truncation: write.truncation,
    events,
    change: contentChange({
      plan: summarize(head),
      created: live === null,
      reverted: write.revertOfRevisionId !== null,
      revision: { id: revision.id, number: revision.number, coalesced: coalesce },
      author: write.author,
      at: env.now,
    }),
  };
}
