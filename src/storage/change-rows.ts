import {
  type AuthorKind,
  type ChangeKey,
  type ChangeRecord,
  isChangeKind,
  type StoredChange,
} from "../plans/ports/records";
import { type PlanJson, planFromJson, planToJson } from "../plans/ports/plan-json";
import type { ChangeContent } from "./change-content";

/** task_plan_changes columns, in the order changeParameters gives their values (content last). */
export const CHANGE_COLUMNS =
  "task_id, version, step, kind, committed_at, plan, revision_id, revision_number, revision_coalesced," +
  " author_kind, author_name, content";

/** The values of a change row but its content (which the database copies from HEAD or leaves NULL). */
export function changeParameters(change: ChangeRecord): unknown[] {
  return [
    change.taskId,
    change.version,
    change.step,
    change.kind,
    change.committedAt.getTime(),
    JSON.stringify(planToJson(change.plan)),
    change.revision?.id ?? null,
    change.revision?.number ?? null,
    change.revision === null ? null : change.revision.coalesced ? 1 : 0,
    change.author.kind,
    change.author.name,
  ];
}

/** Change rows after a key (bound as afterKey gives it). */
export const AFTER_KEY = "(version > ? OR (version = ? AND step > ?))";
export const afterKey = (key: ChangeKey): number[] => [key.version, key.version, key.step];

/** The columns of a `prefix` row (ChangeContent), in the order prefixParameters gives their values. */
export const PREFIX_COLUMNS = "content_kept_chars, content_tail";

/** The values of PREFIX_COLUMNS for a change whose content is held as `content`. */
export function prefixParameters(content: ChangeContent): unknown[] {
  return content.form === "prefix" ? [content.keptChars, content.tail] : [null, null];
}

/** One row of task_plan_changes as both drivers return it. */
export type ChangeRow = Record<string, string | number | null>;

/** A stored change; `content` is null unless the read selected it. */
export function changeFromRow(row: ChangeRow): StoredChange {
  const kind = String(row.kind);
  if (!isChangeKind(kind)) throw new Error(`unknown change kind ${kind}`);
  return {
    taskId: String(row.task_id),
    version: Number(row.version),
    step: Number(row.step) === 1 ? 1 : 0,
    kind,
    committedAt: new Date(Number(row.committed_at)),
    plan: planFromJson(JSON.parse(String(row.plan)) as PlanJson),
    revision:
      row.revision_id === null || row.revision_id === undefined
        ? null
        : {
            id: String(row.revision_id),
            number: Number(row.revision_number),
            coalesced: Number(row.revision_coalesced) === 1,
          },
    author: { kind: authorKind(row.author_kind), name: String(row.author_name) },
    content: row.content === null || row.content === undefined ? null : String(row.content),
  };
}

/**
 * What a row read with PREFIX_COLUMNS says of an append's content: the kept code points and tail
 * (kept when the row was later given a copy); null for any other row.
 */
export interface ContentPrefix {
  readonly keptChars: number;
  readonly tail: string;
}

export function prefixFromRow(row: ChangeRow): ContentPrefix | null {
  const kept = row.content_kept_chars;
  if (kept === null || kept === undefined) return null;
  return { keptChars: Number(kept), tail: String(row.content_tail ?? "") };
}

/** A change as read, with its prefix (ContentPrefix). */
export interface ReadChange {
  readonly change: StoredChange;
  readonly prefix: ContentPrefix | null;
}

/**
 * True when a prefix row's content may be derived from `next`, the change after it: another append
 * (resolved or copied), or the implementation-started mark of the same version. Any other write
 * copied the row first; if it did not (a replica from before prefix rows), nothing is derived.
 */
export function derivesFrom(
  row: ChangeKey,
  next: { readonly change: ChangeKey; readonly prefix: ContentPrefix | null },
): boolean {
  if (!isNextKey(row, next.change)) return false;
  return next.prefix !== null || next.change.step === 1;
}

/**
 * Gives every prefix row without a copy its content (pure). `rows` are consecutive reads in key
 * order; `next` is the content of the change after the last row when derivesFrom holds for it (the
 * next copy, or HEAD), else null. A prefix row's content is the first keptChars code points of the
 * content of the change after it, then its tail. When that content is unknown (a version missing in
 * between, a deletion), the row's content stays null and the reader treats it as pruned history.
 */
export function resolvePrefixes(rows: readonly ReadChange[], next: string | null): StoredChange[] {
  const resolved: StoredChange[] = [];
  let after = next;
  for (let i = rows.length - 1; i >= 0; i--) {
    const { change, prefix } = rows[i] as ReadChange;
    const following = rows[i + 1];
    if (following && !derivesFrom(change, following)) after = null;
    let { content } = change;
    if (content === null && prefix !== null && after !== null)
      content = codePointPrefix(after, prefix.keptChars) + prefix.tail;
    resolved.push(content === change.content ? change : { ...change, content });
    after = content;
  }
  return resolved.reverse();
}

/** True when `b` is the change right after `a` (a version's mark, or the next version). */
export function isNextKey(a: ChangeKey, b: ChangeKey): boolean {
  return b.version === a.version ? a.step === 0 && b.step === 1 : b.version === a.version + 1;
}

/** The first `count` code points of `text` (a lone surrogate counts as one). */
export function codePointPrefix(text: string, count: number): string {
  let end = 0;
  for (let taken = 0; taken < count && end < text.length; taken++) {
    const code = text.charCodeAt(end);
    const pair =
      code >= 0xd800 &&
      code <= 0xdbff &&
      end + 1 < text.length &&
      (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

function authorKind(value: unknown): AuthorKind {
  return value === "user" ? "user" : "agent";
}
