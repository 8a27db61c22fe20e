import type { ChangeKey, ChangeKind, ChangeRecord, ChangedPlan, HeadRecord } from "../ports/records";
import type { Author } from "../rules/author";
import { planErrors } from "../errors";

/** Orders change keys: by version, then step (a version's implementation-started mark after it). */
export function compareChangeKeys(a: ChangeKey, b: ChangeKey): number {
  return a.version - b.version || a.step - b.step;
}

/**
 * Where a watch resumed after `version` stands: every change of a greater version follows, and the
 * implementation-started mark of `version` itself does not (it did not change the version).
 */
export function afterVersion(version: number): ChangeKey {
  return { version, step: 1 };
}

/**
 * Where a watch stands after a snapshot of `head` (null: the task never had a plan): every change
 * committed after the read follows. A snapshot already shows the implementation-started mark of its
 * version when the mark was set at that version or before.
 */
export function afterSnapshot(
  head: Pick<HeadRecord, "version" | "implementationStartedAt"> | null,
): ChangeKey {
  if (head === null) return { version: 0, step: 1 };
  return { version: head.version, step: head.implementationStartedAt === null ? 0 : 1 };
}

/**
 * Checks a resume point against the retained history: changes of versions after `after` up to
 * `headVersion` must all still be recorded (`oldestRetained` is the oldest recorded version, null
 * for none). A resume point ahead of the plan (the task was deleted and created again, or the version
 * never existed) cannot be continued either. Throws OUT_OF_RANGE WATCH_HISTORY_EXPIRED.
 */
export function checkResumable(after: number, headVersion: number, oldestRetained: number | null): void {
  if (after > headVersion) throw planErrors.watchHistoryExpired(after, headVersion);
  if (after === headVersion) return;
  if (oldestRetained === null || oldestRetained > after + 1)
    throw planErrors.watchHistoryExpired(after, headVersion);
}

/** The change a content write commits (AC-TASKS-PLAN-APPEND-005.4's events of one write, as one change). */
export function contentChange(write: {
  readonly plan: ChangedPlan;
  readonly created: boolean;
  readonly reverted: boolean;
  readonly revision: { readonly id: string; readonly number: number; readonly coalesced: boolean };
  readonly author: Author;
  readonly at: Date;
}): ChangeRecord {
  const kind: ChangeKind = write.reverted ? "reverted" : write.created ? "created" : "updated";
  return change(kind, write.plan, 0, write.author, write.at, write.revision);
}

/** The change of a plan delete: the deleted plan with the tombstone's (new) version. */
export function deleteChange(deleted: ChangedPlan, version: number, author: Author, at: Date): ChangeRecord {
  return change("deleted", { ...deleted, version, updatedAt: at }, 0, author, at, null);
}

/** The change of the first implementation-started mark, at the plan's unchanged version. */
export function implementationStartedChange(marked: ChangedPlan, author: Author, at: Date): ChangeRecord {
  return change("implementation-started", marked, 1, author, at, null);
}

/**
 * The change an import records (ImportTask created or overwrote the whole task): the imported plan
 * at its own version, step 0, with its newest revision; the change history starts again at it.
 */
export function importedChange(
  plan: ChangedPlan,
  newest: { readonly id: string; readonly number: number } | null,
  author: Author,
  at: Date,
): ChangeRecord {
  const revision = newest === null ? null : { id: newest.id, number: newest.number, coalesced: false };
  return change("imported", plan, 0, author, at, revision);
}

/**
 * The change an import records when the imported task has no plan (only its task record): no plan
 * (a deleted one at version 0, which the wire sends as no plan at all), keyed after version 0 and
 * before version 1 (step 1 of version 0), so that a watch restarted at the start of the history
 * receives it, a watch resumed after version 0 (or from a snapshot of no plan) does not, and the plan
 * written next, at version 1, follows it.
 */
export function importedWithoutPlanChange(taskId: string, author: Author, at: Date): ChangeRecord {
  const none: ChangedPlan = {
    taskId,
    title: "",
    contentBytes: 0,
    contentChars: 0,
    version: 0,
    createdBy: author.kind,
    createdAt: at,
    updatedAt: at,
    latestRevisionNumber: 0,
    deleted: true,
    implementationStartedAt: null,
    implementationStartedBy: null,
    checklist: null,
    implementationStartedSessionId: null,
  };
  return change("imported", none, 1, author, at, null);
}

function change(
  kind: ChangeKind,
  plan: ChangedPlan,
  step: 0 | 1,
  author: Author,
  committedAt: Date,
  revision: ChangeRecord["revision"],
): ChangeRecord {
  return {
    taskId: plan.taskId,
    version: plan.version,
    step,
    kind,
    plan,
    revision,
    author: { kind: author.kind, name: author.name },
    committedAt,
  };
}

/** What a reader of the change history knows of the last change it delivered. */
export interface LastChange extends ChangeKey {
  readonly kind: ChangeKind;
  /** Whether the plan after that change carried the implementation-started mark. */
  readonly marked: boolean;
}

export function lastChangeOf(change: ChangeRecord): LastChange {
  return {
    version: change.version,
    step: change.step,
    kind: change.kind,
    marked: change.plan.implementationStartedAt !== null,
  };
}

/**
 * Whether `next` is certainly the change right after `last`, so that a reader may deliver it as a
 * notification carried it, without reading the history. The mark of version V (V.1) is the only
 * change that may sit between V.0 and V+1.0; it cannot exist when the plan was already marked at
 * V.0 (first mark wins), when V.0 deleted the plan, or when the plan after V+1.0 is unmarked (a mark
 * made at V stays on every later write of the plan, and on the deleted plan a delete reports).
 */
export function followsDirectly(last: LastChange, next: ChangeRecord): boolean {
  if (next.step === 1) return last.step === 0 && next.version === last.version;
  if (next.version !== last.version + 1) return false;
  if (last.step === 1 || last.kind === "deleted" || last.marked) return true;
  return next.plan.implementationStartedAt === null;
}
