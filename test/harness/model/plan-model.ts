import {
  LIMIT_BYTES,
  appendedContent,
  codePoints,
  isBlankFragment,
  isSuspiciousReduction,
  occurrences,
  partialRead,
  utf8Bytes,
} from "./plan-text-rules";

/**
 * An independent model of one task's plan for the differential test of the write paths: HEAD,
 * version, revisions (numbering, coalescing, revert markers) and the change each version produced,
 * with every rule restated from the seeds, DESIGN.md, README.md and the proto comments (never from
 * src/). Each operation first *decides* (a rejection, or the write it would commit) and changes
 * nothing; `commit` applies a write once the product accepted it, learning the new revision's id.
 */

export type ModelKind = "agent" | "user";
export interface ModelAuthor {
  readonly kind: ModelKind;
  readonly name: string;
}
export interface ModelHead {
  readonly title: string;
  readonly content: string;
  readonly createdBy: ModelKind;
}
export interface ModelRevision {
  readonly number: number;
  id: string;
  title: string;
  content: string;
  readonly author: ModelAuthor;
  /** Number of the revision a revert/restore marker copies; null for ordinary revisions. */
  readonly revertOf: number | null;
  /** 0 when written, +1 each time a write coalesces into it (its revision_version must change). */
  rowChanges: number;
}
export type ChangeKind = "CREATED" | "UPDATED" | "REVERTED" | "DELETED";
export interface ModelChange {
  readonly version: number;
  /** The kinds the docs allow for this change (two only where README and proto disagree). */
  readonly kinds: readonly ChangeKind[];
  readonly content: string;
  readonly revision: { readonly number: number; readonly id: string; readonly coalesced: boolean } | null;
}

/** One acceptable failure: reason and the ErrorInfo metadata it must carry. */
export interface Failure {
  readonly reason: string;
  readonly metadata?: Readonly<Record<string, string>>;
}
export interface Rejection {
  readonly ok: false;
  /** Any of these is a correct answer (checks whose relative order the docs leave open). */
  readonly accepted: readonly Failure[];
}
export interface PlannedWrite {
  readonly ok: true;
  /** A restore of the content already current: answered, nothing written. */
  readonly alreadyCurrent: boolean;
  readonly head: ModelHead | null;
  readonly kinds: readonly ChangeKind[];
  readonly revision: {
    readonly number: number;
    readonly coalesced: boolean;
    readonly author: ModelAuthor;
    readonly revertOf: number | null;
  } | null;
  readonly truncation?: {
    readonly priorChars: number;
    readonly newChars: number;
    readonly priorRevisionNumber: number;
  };
  readonly priorRevisionNumber?: number;
}
export type Decision = Rejection | PlannedWrite;
export type ReadDecision =
  | Rejection
  | {
      readonly ok: true;
      readonly content: string;
      readonly hasMore: boolean;
      readonly nextOffset: number | undefined;
      readonly totalChars: number;
      readonly totalBytes: number;
    };

type Groups = readonly (Failure | false | undefined)[][];

/** The first group holding a failure (failures within one group may come in any order), or null. */
function firstFailures(groups: Groups): Rejection | null {
  for (const group of groups) {
    const accepted = group.filter((f): f is Failure => !!f);
    if (accepted.length > 0) return { ok: false, accepted };
  }
  return null;
}

const tooLarge = (size: number): Failure => ({
  reason: "PLAN_TOO_LARGE",
  metadata: { size_bytes: String(size), limit_bytes: String(LIMIT_BYTES) },
});

/** Requests as the model sees them (titles absent = undefined, versions absent = undefined). */
export interface ContentRequest {
  readonly content: string;
  readonly title?: string | undefined;
  readonly author: ModelAuthor;
  readonly expectedVersion?: number | undefined;
  readonly acknowledgeReduction: boolean;
}

export class PlanModel {
  head: ModelHead | null = null;
  version = 0;
  readonly revisions: ModelRevision[] = [];
  readonly changes: ModelChange[] = [];

  /** `coalescing`: the window is on and longer than any run (0 = never coalesce). */
  constructor(readonly coalescing: boolean) {}

  latest(): ModelRevision | undefined {
    return this.revisions[this.revisions.length - 1];
  }

  revision(number: number): ModelRevision | undefined {
    return this.revisions.find((r) => r.number === number);
  }

  /** CreatePlan: creates, or with expected_version conditionally replaces (reduction guard on). */
  create(req: ContentRequest): Decision {
    const size = utf8Bytes(req.content);
    const head = this.head;
    const rejection = firstFailures([
      [req.content === "" && { reason: "CONTENT_REQUIRED" }, size > LIMIT_BYTES && tooLarge(size)],
      [
        head === null && req.expectedVersion !== undefined && { reason: "VERSION_MISMATCH" },
        head !== null && req.expectedVersion === undefined && { reason: "PLAN_EXISTS" },
        head !== null &&
          req.expectedVersion !== undefined &&
          req.expectedVersion !== this.version && { reason: "VERSION_MISMATCH" },
      ],
    ]);
    if (rejection) return rejection;
    if (head === null)
      return this.write({ title: req.title ?? "Plan", content: req.content }, req.author, false);
    return this.guarded({ title: req.title ?? head.title, content: req.content }, req);
  }

  /** UpdatePlan WRITE_MODE_REPLACE (or unspecified). */
  replace(req: ContentRequest): Decision {
    const size = utf8Bytes(req.content);
    const rejection = firstFailures([
      [req.content === "" && { reason: "CONTENT_REQUIRED" }, size > LIMIT_BYTES && tooLarge(size)],
      [
        req.expectedVersion === undefined && { reason: "VERSION_REQUIRED" },
        this.head === null && { reason: "PLAN_NOT_FOUND" },
      ],
      [req.expectedVersion !== this.version && { reason: "VERSION_MISMATCH" }],
    ]);
    if (rejection) return rejection;
    const head = this.head as ModelHead;
    return this.guarded({ title: req.title ?? head.title, content: req.content }, req);
  }

  /** UpdatePlan WRITE_MODE_APPEND: composed inside the write, measured after composition, never guarded. */
  append(req: ContentRequest): Decision {
    const head = this.head;
    const composed = head === null ? "" : appendedContent(head.content, req.content);
    const size = utf8Bytes(composed);
    const rejection = firstFailures([
      [
        req.content === "" && { reason: "CONTENT_REQUIRED" },
        req.content !== "" && isBlankFragment(req.content) && { reason: "FRAGMENT_BLANK" },
        req.acknowledgeReduction && { reason: "REDUCTION_ACK_NOT_APPLICABLE" },
      ],
      [head === null && { reason: "PLAN_NOT_FOUND" }],
      [
        req.expectedVersion !== undefined &&
          req.expectedVersion !== this.version && { reason: "VERSION_MISMATCH" },
        size > LIMIT_BYTES && tooLarge(size),
      ],
    ]);
    if (rejection) return rejection;
    return this.write(
      { title: req.title ?? (head as ModelHead).title, content: composed },
      req.author,
      false,
    );
  }

  /** EditPlan: the one exact occurrence of old_text; the proto fixes the order of every check. */
  edit(req: { oldText: string; newText: string } & Omit<ContentRequest, "content" | "title">): Decision {
    const head = this.head;
    const found = head === null ? 0 : occurrences(head.content, req.oldText);
    const result = head === null || found !== 1 ? "" : head.content.replace(req.oldText, () => req.newText);
    const size = utf8Bytes(result);
    const rejection = firstFailures([
      [req.oldText === "" && { reason: "EDIT_TEXT_REQUIRED" }],
      [head === null && { reason: "PLAN_NOT_FOUND" }],
      [req.expectedVersion === undefined && { reason: "VERSION_REQUIRED" }],
      [req.expectedVersion !== this.version && { reason: "VERSION_MISMATCH" }],
      [found === 0 && { reason: "EDIT_TEXT_NOT_FOUND" }],
      [found > 1 && { reason: "EDIT_TEXT_NOT_UNIQUE", metadata: { occurrences: String(found) } }],
      [result === "" && { reason: "CONTENT_REQUIRED" }],
      [size > LIMIT_BYTES && tooLarge(size)],
    ]);
    if (rejection) return rejection;
    return this.guarded({ title: (head as ModelHead).title, content: result }, req);
  }

  /** SavePlan (editor): creates or replaces unconditionally; empty content allowed; no guard. */
  save(req: Pick<ContentRequest, "content" | "title" | "author">): Decision {
    const size = utf8Bytes(req.content);
    const rejection = firstFailures([[size > LIMIT_BYTES && tooLarge(size)]]);
    if (rejection) return rejection;
    const title = req.title ?? this.head?.title ?? "Plan";
    return this.write({ title, content: req.content }, req.author, false);
  }

  /** DeletePlan: HEAD goes (its version is kept as a tombstone), revisions stay. */
  delete(req: { expectedVersion?: number | undefined }): Decision {
    const rejection = firstFailures([
      [this.head === null && { reason: "PLAN_NOT_FOUND" }],
      [
        req.expectedVersion !== undefined &&
          req.expectedVersion !== this.version && { reason: "VERSION_MISMATCH" },
      ],
    ]);
    if (rejection) return rejection;
    return { ok: true, alreadyCurrent: false, head: null, kinds: ["DELETED"], revision: null };
  }

  /**
   * RestorePlanRevision (agent): only when plan and revision are unchanged since read; the token sent
   * is current when `tokenRowChanges` equals the revision's row changes.
   */
  restore(req: {
    revisionNumber: number | null;
    tokenRowChanges: number;
    expectedVersion: number;
    author: ModelAuthor;
  }): Decision {
    const source = req.revisionNumber === null ? undefined : this.revision(req.revisionNumber);
    const rejection = firstFailures([
      [
        this.head === null && { reason: "PLAN_NOT_FOUND" },
        req.expectedVersion !== this.version && { reason: "VERSION_MISMATCH" },
        source === undefined && { reason: "REVISION_NOT_FOUND" },
        source !== undefined && source.rowChanges !== req.tokenRowChanges && { reason: "REVISION_CHANGED" },
      ],
    ]);
    if (rejection) return rejection;
    const head = this.head as ModelHead;
    const src = source as ModelRevision;
    if (head.title === src.title && head.content === src.content) {
      return { ok: true, alreadyCurrent: true, head, kinds: [], revision: null };
    }
    return this.marker(src, req.author, ["REVERTED"]);
  }

  /** RevertPlan (editor): always a new marker revision copying the target; recreates a deleted plan. */
  revert(req: { revisionNumber: number | null; author: ModelAuthor }): Decision {
    const source = req.revisionNumber === null ? undefined : this.revision(req.revisionNumber);
    if (source === undefined) return { ok: false, accepted: [{ reason: "REVISION_NOT_FOUND" }] };
    // README: a revert that creates the plan is CREATED; the proto's enum says REVERTED.
    return this.marker(source, req.author, this.head === null ? ["CREATED", "REVERTED"] : ["REVERTED"]);
  }

  /** GetPlan with a range: offsets and limits in code points (limit 1..65,536), optional version check. */
  read(req: {
    offset: number;
    limit?: number | undefined;
    expectedVersion?: number | undefined;
  }): ReadDecision {
    const head = this.head;
    const range = head === null ? null : partialRead(head.content, req.offset, req.limit);
    const rejection = firstFailures([
      // The docs order none of a read's checks against the others.
      [
        req.limit !== undefined && (req.limit < 1 || req.limit > 65_536) && { reason: "INVALID_FIELD" },
        head === null && { reason: "PLAN_NOT_FOUND" },
        head !== null &&
          req.expectedVersion !== undefined &&
          req.expectedVersion !== this.version && { reason: "VERSION_MISMATCH" },
        head !== null && range === null && { reason: "OFFSET_OUT_OF_RANGE" },
      ],
    ]);
    if (rejection) return rejection;
    const content = (head as ModelHead).content;
    return {
      ok: true,
      ...(range as NonNullable<typeof range>),
      totalChars: codePoints(content),
      totalBytes: utf8Bytes(content),
    };
  }

  /** Applies an accepted write; `revisionId` is the id the product answered for a new revision. */
  commit(planned: PlannedWrite, revisionId: string): void {
    if (planned.alreadyCurrent) return;
    this.version++;
    this.head = planned.head;
    const written = planned.revision;
    const latest = this.latest();
    const id = written?.coalesced && latest ? latest.id : revisionId;
    if (written && planned.head) {
      if (written.coalesced && latest) {
        latest.title = planned.head.title;
        latest.content = planned.head.content;
        latest.rowChanges++;
      } else {
        this.revisions.push({
          number: written.number,
          id: revisionId,
          title: planned.head.title,
          content: planned.head.content,
          author: written.author,
          revertOf: written.revertOf,
          rowChanges: 0,
        });
      }
    }
    this.changes.push({
      version: this.version,
      kinds: planned.kinds,
      content: planned.head?.content ?? "",
      revision: written ? { number: written.number, id, coalesced: written.coalesced } : null,
    });
  }

  /** A replacement judged by the reduction guard (agent replace, conditional create, edit). */
  private guarded(next: { title: string; content: string }, req: Omit<ContentRequest, "content">): Decision {
    const priorChars = codePoints((this.head as ModelHead).content);
    const newChars = codePoints(next.content);
    if (!isSuspiciousReduction(priorChars, newChars)) return this.write(next, req.author, false);
    if (!req.acknowledgeReduction) {
      const metadata = { prior_chars: String(priorChars), new_chars: String(newChars) };
      return { ok: false, accepted: [{ reason: "REDUCTION_NOT_ACKNOWLEDGED", metadata }] };
    }
    // An acknowledged reduction starts a new revision, so the replaced content keeps its own.
    const priorRevisionNumber = this.latest()?.number ?? 0;
    return {
      ...this.write(next, req.author, true),
      truncation: { priorChars, newChars, priorRevisionNumber },
    };
  }

  /** A content or title write: coalesced into the newest revision when the seeds' rules allow it. */
  private write(next: { title: string; content: string }, author: ModelAuthor, force: boolean): PlannedWrite {
    const latest = this.latest();
    const coalesced =
      this.coalescing &&
      !force &&
      this.head !== null && // a write that creates the plan always starts a revision
      latest !== undefined &&
      latest.revertOf === null && // markers are never coalesced into
      latest.author.kind === author.kind &&
      latest.author.name === author.name;
    const number = coalesced && latest ? latest.number : (latest?.number ?? 0) + 1;
    return {
      ok: true,
      alreadyCurrent: false,
      head: { ...next, createdBy: this.head?.createdBy ?? author.kind },
      kinds: [this.head === null ? "CREATED" : "UPDATED"],
      revision: { number, coalesced, author, revertOf: null },
    };
  }

  private marker(source: ModelRevision, author: ModelAuthor, kinds: readonly ChangeKind[]): PlannedWrite {
    const latest = this.latest();
    return {
      ok: true,
      alreadyCurrent: false,
      head: { title: source.title, content: source.content, createdBy: this.head?.createdBy ?? author.kind },
      kinds,
      revision: { number: (latest?.number ?? 0) + 1, coalesced: false, author, revertOf: source.number },
      priorRevisionNumber: latest?.number ?? 0,
    };
  }
}
