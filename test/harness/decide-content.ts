import { type ContentWrite, contentDecider } from "../../src/plans/content-write";
import type { LockedHead, LockedRevision } from "../../src/plans/ports/records";
import type { Decision, WriteEnv, WriteResult, WriteState } from "../../src/plans/write-context";

/** A HEAD or revision of a test state, with or without content. */
type Row<T> = Omit<T, "content" | "legacyContent"> & { readonly content: string | null };

/** A state as a test builds it: rows with their content (or null), nothing read yet. */
export interface TestState {
  readonly taskId: string;
  readonly head: Row<LockedHead> | null;
  readonly latest: Row<LockedRevision> | null;
  readonly history?: WriteState["history"];
}

/**
 * Decides `write` on `state` as the write pipeline would: the state is read as the write's command
 * says (a metadata read sees no content, but a HEAD's without trimmed lengths as legacyContent).
 */
export function decideContentWrite(
  write: ContentWrite,
  state: TestState,
  env: WriteEnv,
): Decision<WriteResult> {
  const history = state.history ?? { revisions: 0, bytes: 0 };
  const decider = contentDecider(write);
  if (decider.reads === "metadata") {
    const head = state.head && {
      ...state.head,
      content: null,
      legacyContent: state.head.trimmedChars == null ? state.head.content : null,
    };
    const latest = state.latest && { ...state.latest, content: null };
    return decider.decide({ taskId: state.taskId, head, latest, history }, env);
  }
  const read = (content: string | null): string => {
    if (content === null) throw new Error("a content read needs the test state's content");
    return content;
  };
  const head = state.head && { ...state.head, content: read(state.head.content), legacyContent: null };
  const latest = state.latest && { ...state.latest, content: read(state.latest.content) };
  return decider.decide({ taskId: state.taskId, head, latest, history }, env);
}

/** The commit of a content write's decision. */
export function contentCommit(
  decision: Decision<WriteResult>,
): Extract<Decision<WriteResult>["commit"], { kind: "content" }> {
  if (decision.commit.kind !== "content")
    throw new Error(`a content write committed ${decision.commit.kind}`);
  return decision.commit;
}
