import { commitContent, type WriteResult } from "./content-commit";
import { composeAppendInStore } from "../rules/compose";
import type { Author } from "../rules/author";
import { planErrors } from "../errors";
import { checkSize } from "../rules/validate";
import type { Decision, WriteEnv, WriteState } from "../pipeline/write-command";

/**
 * The fields of a checked content write (content-decision.ts ContentWrite) that an append is decided
 * on, declared here so the decision needs nothing of the paths that dispatch to it.
 */
export interface AppendWrite {
  readonly title: string | undefined;
  /** The fragment to append. */
  readonly content: string;
  readonly expectedVersion: number | undefined;
  readonly author: Author;
}

/**
 * An append (pure: no I/O), decided on a read of the metadata only. Order after the lock: plan
 * existence (AC-TASKS-PLAN-APPEND-001.6) -> composition and the size of the composed content
 * (007.1/007.3/007.4: measured once, here; the read of the stored plan, 003.5, fails in the store
 * before it) -> the version, when one is given. The database composes the content from the stored
 * content's trimmed lengths (recorded at every content write; the store measures a row written
 * before they were), so the stored plan never travels. An append is never judged a reduction and
 * stays eligible for coalescing (004.2).
 */
export function decideAppend(
  write: AppendWrite,
  state: WriteState<"metadata">,
  env: WriteEnv,
): Promise<Decision<WriteResult>> {
  const { live } = state;
  if (live === null) throw planErrors.planNotFound(state.taskId);
  const content = composeAppendInStore(live, write.content);
  checkSize(content.bytes);
  if (write.expectedVersion !== undefined && write.expectedVersion !== live.version)
    throw planErrors.versionMismatch();
  return commitContent(state, env, {
    title: write.title,
    content,
    author: write.author,
    forceNewRevision: false,
    revertOfRevisionId: null,
    truncation: null,
  });
}
