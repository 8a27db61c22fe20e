import type { ChangeRecord, HeadWrite, LockedHead, RevisionRecord } from "./ports/records";
import type { Author } from "./author";
import { deleteChange } from "./changes";
import { planErrors } from "./errors";
import { type PlanEvent, summarize } from "./events";
import { revisionVersion } from "./revision-version";
import { requireCurrentVersion } from "./versions";
import {
  commitContent,
  contentOf,
  livePlan,
  wholeContent,
  type WriteDecision,
  type WriteEnv,
  type WriteState,
} from "./write-context";

/**
 * A revert (editor path): a new revision copying the target's title and content exactly, marked
 * revert_of_revision_id, never coalesced, exempt from the size limit. Recreates a deleted plan.
 */
export function decideRevert(
  target: RevisionRecord,
  author: Author,
  state: WriteState,
  env: WriteEnv,
): WriteDecision {
  return commitContent(state, env, {
    title: target.title,
    content: wholeContent(target.content),
    author,
    forceNewRevision: true,
    revertOfRevisionId: target.id,
    truncation: null,
  });
}

/** Outcome of a restore: nothing to write, or the commit of a new marked revision. */
export type RestoreDecision =
  | { readonly status: "already-current"; readonly head: LockedHead }
  | {
      readonly status: "restored";
      readonly decision: WriteDecision;
      readonly priorRevisionNumber: number | null;
    };

/**
 * An agent restore (seed 003: "Recovery never silently replaces intervening user work"). Order
 * after the lock: plan existence -> version required/stale -> revision version required ->
 * revision of this task -> revision unchanged since read -> already current (no write) -> a new
 * revision copying the source exactly, marked, never coalesced, exempt from the size limit.
 */
export function decideRestore(
  request: {
    readonly revisionId: string;
    readonly expectedVersion?: number | undefined;
    readonly expectedRevisionVersion: string;
    readonly target: RevisionRecord | null;
    readonly author: Author;
  },
  state: WriteState,
  env: WriteEnv,
): RestoreDecision {
  const live = livePlan(state);
  if (live === null) throw planErrors.planNotFound(state.taskId);
  requireCurrentVersion(live, request.expectedVersion);
  if (request.expectedRevisionVersion === "") throw planErrors.revisionVersionRequired();
  const { target } = request;
  if (target === null) throw planErrors.revisionNotFound(state.taskId, request.revisionId);
  if (revisionVersion(target) !== request.expectedRevisionVersion) throw planErrors.revisionChanged();
  if (live.title === target.title && contentOf(live) === target.content)
    return { status: "already-current", head: live };
  return {
    status: "restored",
    decision: decideRevert(target, request.author, state, env),
    priorRevisionNumber: state.latest?.number ?? null,
  };
}

/** What a plan delete commits: the HEAD turned into a tombstone (content cleared, version bumped). */
export interface DeleteDecision {
  readonly head: HeadWrite;
  readonly fenceVersion: number;
  readonly events: readonly PlanEvent[];
  readonly change: ChangeRecord;
}

/**
 * Deletes the live plan, keeping its revisions. The tombstone keeps the version counter so that a
 * version is never reused, and bumps it so that no version read before the delete matches again.
 */
export function decideDelete(
  expectedVersion: number | undefined,
  author: Author,
  state: WriteState,
  env: WriteEnv,
): DeleteDecision {
  const live = livePlan(state);
  if (live === null) throw planErrors.planNotFound(state.taskId);
  if (expectedVersion !== undefined && expectedVersion !== live.version) throw planErrors.versionMismatch();
  const head: HeadWrite = {
    ...live,
    title: "",
    content: "",
    contentBytes: 0,
    contentChars: 0,
    trimmedBytes: 0,
    trimmedChars: 0,
    version: live.version + 1,
    updatedAt: env.now,
    deleted: true,
    implementationStartedAt: null,
    implementationStartedBy: null,
    implementationStartedSessionId: null,
  };
  return {
    head,
    fenceVersion: live.version,
    events: [{ type: "plan.deleted", plan: summarize(live) }],
    change: deleteChange(summarize(live), head.version, author, env.now),
  };
}
