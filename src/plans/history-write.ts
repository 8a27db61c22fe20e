import type { HeadRecord, RevisionRecord } from "../storage/records";
import type { Author } from "./author";
import { planErrors } from "./errors";
import { type PlanEvent, summarize } from "./events";
import { commitContent, livePlan, type WriteDecision, type WriteEnv, type WriteState } from "./write-context";

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
    content: target.content,
    author,
    forceNewRevision: true,
    revertOfRevisionId: target.id,
    truncation: null,
  });
}

/** What a plan delete commits: the HEAD turned into a tombstone (content cleared, version bumped). */
export interface DeleteDecision {
  readonly head: HeadRecord;
  readonly fenceVersion: number;
  readonly events: readonly PlanEvent[];
}

/**
 * Deletes the live plan, keeping its revisions. The tombstone keeps the version counter so that a
 * version is never reused, and bumps it so that no version read before the delete matches again.
 */
export function decideDelete(
  expectedVersion: number | undefined,
  state: WriteState,
  env: WriteEnv,
): DeleteDecision {
  const live = livePlan(state);
  if (live === null) throw planErrors.planNotFound(state.taskId);
  if (expectedVersion !== undefined && expectedVersion !== live.version) throw planErrors.versionMismatch();
  const head: HeadRecord = {
    ...live,
    title: "",
    content: "",
    contentBytes: 0,
    contentChars: 0,
    version: live.version + 1,
    updatedAt: env.now,
    deleted: true,
    implementationStartedAt: null,
    implementationStartedBy: null,
    implementationStartedSessionId: null,
  };
  return { head, fenceVersion: live.version, events: [{ type: "plan.deleted", plan: summarize(live) }] };
}
