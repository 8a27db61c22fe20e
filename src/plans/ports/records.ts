/** Plain records the storage layer reads and writes; no TypeORM types leak past this module. */

/** Kind of author of a revision. */
export type AuthorKind = "agent" | "user";

/** A task row. */
export interface TaskRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly title: string;
  readonly createdAt: Date;
}

/**
 * The HEAD row of a task's plan. A deleted plan keeps its row as a tombstone (`deleted`) so that the
 * version keeps increasing across delete and re-create and is never reused.
 */
export interface HeadRecord {
  readonly taskId: string;
  readonly title: string;
  readonly content: string;
  readonly contentBytes: number;
  readonly contentChars: number;
  readonly version: number;
  readonly createdBy: AuthorKind;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly latestRevisionNumber: number;
  readonly deleted: boolean;
  readonly implementationStartedAt: Date | null;
  readonly implementationStartedBy: string | null;
  readonly implementationStartedSessionId: string | null;
  /**
   * Code points and UTF-8 bytes of the content without its trailing whitespace, recorded at every
   * content write so that an append can compose in the database; null (or absent) on rows written
   * before they were recorded.
   */
  readonly trimmedChars?: number | null;
  readonly trimmedBytes?: number | null;
  /** The content's checklist progress, counted when it was written; null on a row written before. */
  readonly checklist: StoredChecklist | null;
}

/** How much of a plan's checklist is done (rules/checklist-progress.ts counts it). */
export interface ChecklistProgress {
  /** Task-list items ticked: `- [x]` or `- [X]`. */
  readonly checked: number;
  /** Task-list items, ticked or not. */
  readonly total: number;
}

/** A text's checklist progress, and the raw text of the last item of a list that ends it. */
export interface ChecklistCount extends ChecklistProgress {
  /** The last item of the text's last block when that block is a list (as written); else null. */
  readonly lastItem: string | null;
}

/**
 * A plan's checklist progress as HEAD stores it, counted when its content is written, with what an
 * append needs to count its result without the stored text: whether the content ends inside a block
 * that takes in what follows a blank line (an unclosed code fence, an HTML block such as `<pre>` or
 * `<!--`), so that an append's fragment would not be blocks of its own.
 */
export interface StoredChecklist extends ChecklistProgress {
  readonly openEnd: boolean;
}

/** A task as a read of tasks gives it: with its live plan's checklist progress (null: no plan, or not counted). */
export interface ListedTask extends TaskRecord {
  readonly checklist: ChecklistProgress | null;
}

/** A HEAD row without its content. */
export type HeadMeta = Omit<HeadRecord, "content">;

/**
 * How a write sets HEAD content: the whole text, or (an append the database composes) the stored
 * content's first `keepChars` code points (the same text as its first `keepBytes` UTF-8 bytes)
 * followed by `suffix`. Both measures are given so that each database cuts where it can cut exactly.
 */
export type ContentChange =
  string | { readonly keepChars: number; readonly keepBytes: number; readonly suffix: string };

/** A HEAD row as a write stores it. */
export interface HeadWrite extends HeadMeta {
  readonly content: ContentChange;
}

/**
 * What a write reads under the lock: only the rows' metadata (an append, which the database
 * composes; an editor save, a revert and a delete, which judge nothing by the old text), or their
 * contents as well.
 */
export type ReadKind = "metadata" | "content";

/** A content, when the write read it. */
export type ReadContent<K extends ReadKind> = K extends "content" ? string : null;

/** A HEAD as a write read it under the lock (tombstone included). */
export interface LockedHead<K extends ReadKind = ReadKind> extends Omit<
  HeadMeta,
  "trimmedChars" | "trimmedBytes"
> {
  readonly content: ReadContent<K>;
  /**
   * Code points and UTF-8 bytes of the content without its trailing whitespace (what an append
   * keeps): as recorded, or measured by the store for a row written before they were recorded.
   */
  readonly trimmedChars: number;
  readonly trimmedBytes: number;
}

/** The newest revision as a write read it under the lock. */
export interface LockedRevision<K extends ReadKind = ReadKind> extends RevisionMeta {
  readonly content: ReadContent<K>;
}

/**
 * The plan content at a past version, as the change history gives it (GetPlanChanges' old side, a
 * merge's base): exactly, or not at all. A version whose write deleted the plan has empty content.
 * When it cannot be derived (history pruned or trimmed, a version never written or ahead of the
 * plan), `oldestVersion` is the oldest version that can be, or null when none older than HEAD can.
 */
export type VersionContent =
  | { readonly derivable: true; readonly version: number; readonly content: string }
  | { readonly derivable: false; readonly version: number; readonly oldestVersion: number | null };

/** What a task's history holds (the history budget): its revisions, and every stored copy of plan text. */
export interface HistoryUsage {
  readonly revisions: number;
  /**
   * UTF-8 bytes of plan text the history stores: the revisions' contents and the change history's
   * copies (WatchPlan's rows: a full copy for every write but an append, which keeps its tail).
   */
  readonly bytes: number;
}

/**
 * What a commit did to its task's history: the usage after it (held to the history budget), and
 * the bytes of plan text its own rows added before the change history yielded to the budget (held
 * to the caller's write budget): its revision (or what a coalesced one grew by), its change row and
 * any change rows it materialized. Never negative.
 */
export interface CommittedUsage {
  readonly usage: HistoryUsage;
  readonly storedBytes: number;
}

/**
 * What a content write may leave its task's history at (history-budget.ts `historyAllowance`): the
 * most revisions and bytes (Infinity: no limit), and the byte figure the change history is trimmed
 * toward, oldest rows first and never the write's own, when the write would leave more than that.
 */
export interface HistoryAllowance {
  readonly revisions: number;
  readonly bytes: number;
  readonly trimToBytes: number;
}

/**
 * What a write reads under the lock: the task, its HEAD and newest revision, and the task's history
 * usage as kept with HEAD (exact: storage recounts a figure it cannot trust), in one statement; then
 * what the write asked for besides.
 */
export interface LockedState<K extends ReadKind = ReadKind> {
  readonly task: TaskRecord;
  readonly head: LockedHead<K> | null;
  readonly latest: LockedRevision<K> | null;
  readonly history: HistoryUsage;
  /** The revision the write asked for by id (null when it asked for none, or there is none). */
  readonly target: RevisionRecord | null;
  /** The remembered request the write asked for (null when it asked for none, or there is none). */
  readonly remembered: WriteRequestRecord | null;
  /** The content at the version the write asked for (null when it asked for none). */
  readonly atVersion: VersionContent | null;
}

/**
 * Marks a merged write: based on `fromVersion` (the caller's expected_version), merged with the
 * changes of versions fromVersion + 1 .. `toVersion` (the version current when it was written).
 */
export interface MergeMarker {
  readonly fromVersion: number;
  readonly toVersion: number;
}

/**
 * How a stale write was merged (told in its answer, not kept on the revision): `lines`, the
 * line-based three-way merge; `edit`, an exact edit whose old_text occurs exactly once in the
 * current content, re-applied there (writes/stale-merge.ts reappliedEdit).
 */
export type MergeMethod = "lines" | "edit";

/** Revision metadata (everything but the content). */
export interface RevisionMeta {
  readonly id: string;
  readonly taskId: string;
  readonly number: number;
  readonly title: string;
  readonly contentBytes: number;
  readonly contentChars: number;
  readonly authorKind: AuthorKind;
  readonly authorName: string;
  readonly revertOfRevisionId: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Increases each time the row changes (coalescing rewrites the newest revision in place). */
  readonly rowVersion: number;
  /** Set on the revision of a merged write (never coalesced into); absent or null otherwise. */
  readonly merge?: MergeMarker | null;
  /** The content's checklist progress, counted when it was written; absent or null on a row written before. */
  readonly checklist?: ChecklistProgress | null;
}

/** A revision with its content. */
export interface RevisionRecord extends RevisionMeta {
  readonly content: string;
}

/** A remembered agent write request (for safe retries). */
export interface WriteRequestRecord {
  readonly taskId: string;
  readonly requestId: string;
  /** SHA-256 (hex) of the request's payload. */
  readonly fingerprint: string;
  /** The write's result, as the write answered it (storage keeps it in a form of its own). */
  readonly result: unknown;
  readonly createdAt: Date;
}

/**
 * What a committed plan change was (one per write that committed, see the WatchPlan contract).
 * `imported`: ImportTask created or overwrote the whole task; the change history starts again at it.
 */
export const CHANGE_KINDS = [
  "created",
  "updated",
  "reverted",
  "deleted",
  "implementation-started",
  "imported",
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export function isChangeKind(value: unknown): value is ChangeKind {
  return (CHANGE_KINDS as readonly unknown[]).includes(value);
}

/**
 * Where a change sits in its task's change history: the plan version it produced, then `step` 0 for
 * the write that produced the version and 1 for the implementation-started mark made at that
 * version (which does not change the version). Keys of one task commit in increasing order.
 */
export interface ChangeKey {
  readonly version: number;
  readonly step: 0 | 1;
}

/** The plan as a change reports it (no content, no storage-only lengths). */
export type ChangedPlan = Omit<HeadMeta, "trimmedChars" | "trimmedBytes">;

/** A committed plan change, recorded in the write's own transaction. */
export interface ChangeRecord extends ChangeKey {
  readonly taskId: string;
  readonly kind: ChangeKind;
  readonly plan: ChangedPlan;
  /** The revision written or coalesced into (content writes only). */
  readonly revision: { readonly id: string; readonly number: number; readonly coalesced: boolean } | null;
  readonly author: { readonly kind: AuthorKind; readonly name: string };
  readonly committedAt: Date;
}

/**
 * What a write commits, as an intent; storage alone decides how it becomes rows (content at HEAD,
 * change rows, the order of its statements, the dialect).
 * - `content`: HEAD set (inserted when `fenceVersion` is null, else updated only where its version
 *   is still `fenceVersion`), and a new revision or the newest rewritten in place (`coalesces`,
 *   fenced on its row version), holding HEAD's new content; the change history yields to `allowance`;
 * - `delete`: HEAD turned into a tombstone, revisions kept;
 * - `mark`: the first implementation-started mark set on HEAD, fenced on its version and on the
 *   plan being unmarked; content, title and version unchanged;
 * - `delete-task`: the task and everything it holds removed (`plan`: the live plan it removed).
 * Every kind but `delete-task` records `change` in the same transaction. A commit is the one model
 * of a change: what is published after it (events.ts) is derived from it.
 */
export type PlanCommit =
  | {
      readonly kind: "content";
      /** The write creates the plan (there was no live plan before it). */
      readonly created: boolean;
      readonly head: HeadWrite;
      readonly fenceVersion: number | null;
      readonly revision: RevisionMeta;
      readonly coalesces: { readonly rowVersion: number; readonly contentBytes: number } | null;
      readonly allowance: HistoryAllowance;
      readonly change: ChangeRecord;
    }
  | {
      readonly kind: "delete";
      readonly head: HeadWrite;
      readonly fenceVersion: number;
      readonly change: ChangeRecord;
    }
  | {
      readonly kind: "mark";
      readonly head: HeadWrite;
      readonly fenceVersion: number;
      readonly change: ChangeRecord;
    }
  | { readonly kind: "delete-task"; readonly taskId: string; readonly plan: ChangedPlan | null };

/**
 * What ImportTask committed: a whole task written by the import's own statements (`created`: none
 * was stored), with the `imported` change it recorded (changes.ts: also for a task without a plan).
 */
export interface ImportCommit {
  readonly kind: "import";
  readonly created: boolean;
  readonly change: ChangeRecord | null;
}

/** Every commit the write pipeline tells its listeners of: a plan write's, or an import's. */
export type CommittedWrite = PlanCommit | ImportCommit;

/** A change as read back: with the plan content after it when asked for (null for a delete). */
export interface StoredChange extends ChangeRecord {
  readonly content: string | null;
}

/**
 * A task as an export reads it and an import writes it (issue 46): the task, its HEAD (tombstone
 * included; null when it never had a plan) and its revisions in number order, contents included.
 */
export interface TaskBundle {
  readonly task: TaskRecord;
  readonly head: HeadRecord | null;
  readonly revisions: readonly RevisionRecord[];
}

/** One page of a task's export, read in one snapshot: the task, HEAD and the next revisions. */
export interface TaskExportPage {
  readonly task: TaskRecord;
  readonly head: HeadRecord | null;
  readonly revisions: readonly RevisionRecord[];
  /** Revisions after the last of this page are left. */
  readonly more: boolean;
  /** The task's number of revisions at this snapshot. */
  readonly revisionCount: number;
}

/** What an import does with its task, decided on what is stored (plans/transfer/task-transfer.ts). */
export type ImportOutcome = "created" | "unchanged" | "overwritten";
