import type { HeadWrite, RevisionRecord } from "../ports/records";
import type { Author } from "../rules/author";
import { deleteChange } from "../changes/change-rows";
import { planErrors } from "../errors";
import { type PlanSummary, summarize } from "../pipeline/events";
import { revisionVersion } from "../rules/revision-version";
import { requireCurrentVersion } from "../rules/versions";
import { commitContent, wholeContent, type WriteResult } from "./content-commit";
import type { Decision, WriteEnv, WriteState } from "../pipeline/write-command";

/**
 * A revert (editor path): a new revision copying the target's title and content exactly, marked
 * revert_of_revision_id, never coalesced, exempt from the size limit. Recreates a deleted plan.
 */
export function decideRevert(
  target: RevisionRecord,
  author: Author,
  state: WriteState,
  env: WriteEnv,
): Promise<Decision<WriteResult>> {
  return commitContent(state, env, {
    title: target.title,
    content: wholeContent(target.content),
    author,
    forceNewRevision: true,
    revertOfRevisionId: target.id,
    truncation: null,
  });
}

/** Result of an agent restore. */
export interface RestoreResult {
  readonly status: "restored" | "already-current";
  readonly plan: PlanSummary;
  readonly revision: WriteResult["revision"] | null;
  readonly priorRevisionNumber: number | null;
}

/** Outcome of a restore: nothing to write (the plan already is the revision), or a new marked revision. */
export type RestoreDecision = { readonly unchanged: RestoreResult } | Decision<RestoreResult>;

/**
 * An agent restore (seed 003: "Recovery never silently replaces intervening user work"). Order
 * after the lock: plan existence -> version required/stale -> revision version required ->
 * revision of this task -> revision unchanged since read -> already current (no write) -> a new
 * revision copying the source exactly, marked, never coalesced, exempt from the size limit.
 */
export async function decideRestore(
  request: {
    readonly revisionId: string;
    readonly expectedVersion?: number | undefined;
    readonly expectedRevisionVersion: string;
    readonly target: RevisionRecord | null;
    readonly author: Author;
  },
  state: WriteState<"content">,
  env: WriteEnv,
): Promise<RestoreDecision> {
  const { live } = state;
  if (live === null) throw planErrors.planNotFound(state.taskId);
  requireCurrentVersion(live, request.expectedVersion);
  if (request.expectedRevisionVersion === "") throw planErrors.revisionVersionRequired();
  const { target } = request;
  if (target === null) throw planErrors.revisionNotFound(state.taskId, request.revisionId);
  if (revisionVersion(target) !== request.expectedRevisionVersion) throw planErrors.revisionChanged();
  if (live.title === target.title && live.content === target.content) {
    const plan = summarize(live);
    return { unchanged: { status: "already-current", plan, revision: null, priorRevisionNumber: null } };
  }
  const restored = await decideRevert(target, request.author, state, env);
  return {
    ...restored,
    result: {
      status: "restored",
      plan: restored.result.plan,
      revision: restored.result.revision,
      priorRevisionNumber: state.latest?.number ?? null,
    },
  };
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
): Decision<void> {
  const { live } = state;
  if (live === null) throw planErrors.planNotFound(state.taskId);
  if (expectedVersion !== undefined && expectedVersion !== live.version) throw planErrors.versionMismatch();
  const deleted = summarize(live);
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
    checklist: null,
  };
  return {
    commit: {
      kind: "delete",
      head,
      fenceVersion: live.version,
      change: deleteChange(deleted, head.version, author, env.now),
    },
    result: undefined,
  };
}
