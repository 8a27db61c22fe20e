import type {
  ContentChange,
  HeadWrite,
  MergeMarker,
  MergeMethod,
  PlanCommit,
  RevisionMeta,
} from "../ports/records";
import type { Author } from "../rules/author";
import { contentChange } from "../changes/change-rows";
import { historyAllowance } from "../pipeline/history-budget";
import { shouldCoalesce } from "../rules/coalesce";
import { type PlanSummary, summarize } from "../pipeline/events";
import { limits } from "../rules/limits";
import { codePointLength, trimTrailingWhitespace, utf8Length } from "../../text/unicode";
import type { Decision, WriteEnv, WriteState } from "../pipeline/write-command";
import { writtenChecklist } from "./checklist-count";

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

/** Result of every content write (the plan without content: acknowledgements never carry it). */
export interface WriteResult {
  readonly plan: PlanSummary;
  readonly revision: { readonly id: string; readonly number: number; readonly coalesced: boolean };
  readonly truncation: Truncation | null;
  /** The versions a merged write merged over (absent or null: it did not merge). */
  readonly merge?: MergeMarker | null;
  /** How it merged (stale-merge.ts MergeMethod; absent or null: it did not merge). */
  readonly mergeMethod?: MergeMethod | null;
}

/** Reported when an acknowledged reduction was stored. */
export interface Truncation {
  readonly priorChars: number;
  readonly newChars: number;
  readonly priorRevisionNumber: number;
}

/**
 * Builds the commit of a content write: the new HEAD (next version, never reused) with its content's
 * checklist counted (checklist-count.ts), and either a new revision numbered MAX+1 or the newest
 * revision updated in place (coalescing), with the same checklist.
 */
export async function commitContent(
  state: WriteState,
  env: WriteEnv,
  write: {
    readonly title: string | undefined;
    readonly content: StoredContent;
    readonly author: Author;
    readonly forceNewRevision: boolean;
    readonly revertOfRevisionId: string | null;
    readonly truncation: Truncation | null;
    readonly merge?: MergeMarker | null;
    readonly mergeMethod?: MergeMethod | null;
  },
): Promise<Decision<WriteResult>> {
  const checklist = await writtenChecklist(state, env, write.content.change);
  const progress = { checked: checklist.checked, total: checklist.total };
  const merge = write.merge ?? null;
  const mergeMethod = write.mergeMethod ?? null;
  const { live, latest } = state;
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
        id: latest.id,
        taskId: latest.taskId,
        number: latest.number,
        title,
        contentBytes,
        contentChars,
        authorKind: latest.authorKind,
        authorName: latest.authorName,
        revertOfRevisionId: latest.revertOfRevisionId,
        createdAt: latest.createdAt,
        updatedAt: env.now,
        rowVersion: latest.rowVersion + 1,
        checklist: progress,
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
        merge,
        checklist: progress,
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
    checklist,
  };
  const plan = summarize(head);
  const written = { id: revision.id, number: revision.number, coalesced: coalesce };
  const commit: PlanCommit = {
    kind: "content",
    created: live === null,
    head,
    fenceVersion: state.head?.version ?? null,
    revision,
    coalesces: coalesce ? { rowVersion: latest.rowVersion, contentBytes: latest.contentBytes } : null,
    allowance: historyAllowance(env.historyBudget, state.history),
    change: contentChange({
      plan,
      created: live === null,
      reverted: write.revertOfRevisionId !== null,
      revision: written,
      author: write.author,
      at: env.now,
    }),
  };
  return {
    commit,
    stored: { planBytes: contentBytes, coalesced: coalesce },
    result: { plan, revision: written, truncation: write.truncation, merge, mergeMethod },
  };
}
