import { commandOf } from "../../../src/plans/writes/content-decision";
import type { WriteResult } from "../../../src/plans/writes/content-commit";
import type { ContentWrite } from "../../../src/plans/writes/content-decision";
import type { LockedHead, LockedRevision, ReadKind } from "../../../src/plans/ports/records";
import { trimmedLengths } from "../../../src/text/unicode";
import {
  type Decision,
  type WriteCommand,
  type WriteEnv,
  type WriteState,
  writeState,
} from "../../../src/plans/pipeline/write-command";

/** A HEAD or revision of a test state, with or without content (and a HEAD with or without trimmed lengths). */
type Row<T> = Omit<T, "content" | "trimmedChars" | "trimmedBytes"> & {
  readonly content: string | null;
  readonly trimmedChars?: number | null;
  readonly trimmedBytes?: number | null;
};

/** A state as a test builds it: rows with their content (or null), nothing read yet. */
export interface TestState {
  readonly taskId: string;
  readonly head: Row<LockedHead> | null;
  readonly latest: Row<LockedRevision> | null;
  readonly history?: WriteState["history"];
}

/**
 * Decides `write` on `state` as the write pipeline would: the state is read as the write's command
 * says (a metadata read sees no content; a HEAD without trimmed lengths is measured, as the store does).
 */
export function decideContentWrite(
  write: ContentWrite,
  state: TestState,
  env: WriteEnv,
): Promise<Decision<WriteResult>> {
  return decideCommand(commandOf(state.taskId, { write, key: undefined }), state, env);
}

/** Decides a content write's command on `state` as the write pipeline would (see decideContentWrite). */
export function decideCommand(
  command: WriteCommand<ReadKind, WriteResult>,
  state: TestState,
  env: WriteEnv,
): Promise<Decision<WriteResult>> {
  const history = state.history ?? { revisions: 0, bytes: 0 };
  let read: WriteState;
  if (command.reads === "metadata") {
    const head = state.head && { ...state.head, content: null, ...trimmed(state.head) };
    const latest = state.latest && { ...state.latest, content: null };
    read = writeState(state.taskId, { head, latest, history });
  } else {
    const text = (content: string | null): string => {
      if (content === null) throw new Error("a content read needs the test state's content");
      return content;
    };
    const head = state.head && { ...state.head, content: text(state.head.content), ...trimmed(state.head) };
    const latest = state.latest && { ...state.latest, content: text(state.latest.content) };
    read = writeState(state.taskId, { head, latest, history });
  }
  // A rule's refusal is thrown as the command decides (before any count), so it stays synchronous.
  // The stored text an append may read under the lock is the test state's.
  const storedContent = () => Promise.resolve(state.head?.content ?? "");
  const deciding = command.decide(read, { ...env, storedContent }, null);
  return Promise.resolve(deciding).then((decided) => {
    if ("unchanged" in decided) throw new Error("a content write decided to change nothing");
    return decided;
  });
}

// A HEAD's trimmed lengths as the store gives them: recorded, or measured on a row that has none.
function trimmed(head: Row<LockedHead>): { trimmedChars: number; trimmedBytes: number } {
  if (head.trimmedChars != null && head.trimmedBytes != null)
    return { trimmedChars: head.trimmedChars, trimmedBytes: head.trimmedBytes };
  if (head.content === null) throw new Error("a HEAD without trimmed lengths needs its content");
  return trimmedLengths(head.content);
}

/** The commit of a content write's decision. */
export function contentCommit(
  decision: Decision<WriteResult>,
): Extract<Decision<WriteResult>["commit"], { kind: "content" }> {
  if (decision.commit.kind !== "content")
    throw new Error(`a content write committed ${decision.commit.kind}`);
  return decision.commit;
}
