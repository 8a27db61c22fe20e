import type { HeadRecord, RevisionRecord, TaskBundle, TaskRecord } from "../ports/records";
import { planErrors } from "../errors";
import {
  checkBundle,
  checkImportedHead,
  checkImportedRevision,
  checkImportedTask,
  type ImportBounds,
} from "./transfer-rules";

/** The first message of an import, decoded: the task, its HEAD and the count its stream declares. */
export interface ImportStart {
  readonly task: TaskRecord;
  readonly head: HeadRecord | null;
  readonly declaredCount: number;
}

/**
 * One ImportTask stream as it arrives (pure): the first message is checked whole (the task, HEAD, a
 * declared count within the bounds), then each revision as it is added, and the totals after each
 * one, so that a stream is refused at the first field past its rule or the first revision past a
 * bound, before the rest is read. What it holds is bounded by `bounds` (revisions, plan text) and the
 * per-field limits (ids, titles, names) of what it accepted.
 */
export class ImportStream {
  private readonly revisions: RevisionRecord[] = [];
  private readonly ids = new Set<string>();
  // Revisions' plan text: the history budget's measure (HEAD's content is its newest revision's,
  // and is held to the plan size limit on its own).
  private bytes = 0;

  constructor(
    private readonly start: ImportStart,
    private readonly bounds: ImportBounds,
  ) {
    const { task, head, declaredCount } = start;
    checkImportedTask(task);
    if (head !== null) checkImportedHead(head, task);
    if (!Number.isSafeInteger(declaredCount) || declaredCount < 0)
      throw planErrors.invalidField("start.revision_count", "must be a count of revisions");
    if (declaredCount > bounds.maxRevisions)
      throw planErrors.historyQuotaExceeded("revisions", bounds.maxRevisions, 0);
  }

  /** UTF-8 bytes of plan text taken so far (HEAD and every revision). */
  get contentBytes(): number {
    return this.bytes + (this.start.head?.contentBytes ?? 0);
  }

  /** Revisions taken so far. */
  get revisionCount(): number {
    return this.revisions.length;
  }

  /** Checks and keeps the next revision of the stream. */
  add(revision: RevisionRecord): void {
    const index = this.revisions.length;
    const taskId = this.start.task.id;
    if (index >= this.start.declaredCount)
      throw planErrors.importInvalid(
        taskId,
        `more than the ${this.start.declaredCount} declared revisions arrived`,
      );
    checkImportedRevision(revision, index, taskId, this.ids);
    this.ids.add(revision.id);
    this.revisions.push(revision);
    this.bytes += revision.contentBytes;
    this.checkBytes();
  }

  /** The whole task once the client half-closed, checked as one (checkBundle). */
  finish(): TaskBundle {
    const { task, head, declaredCount } = this.start;
    const bundle = { task, head, revisions: this.revisions };
    checkBundle(bundle, declaredCount);
    return bundle;
  }

  private checkBytes(): void {
    if (this.bytes > this.bounds.maxBytes)
      throw planErrors.historyQuotaExceeded("bytes", this.bounds.maxBytes, 0);
  }
}
