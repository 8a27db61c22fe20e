import type { ChangeKey, ChangeRecord, HeadWrite, StoredChange } from "../../plans/ports/records";
import {
  AFTER_KEY,
  afterKey,
  type ChangeContentValues,
  changeKeyFromRow,
  changeStoredBytesSql,
  PREFIX_COLUMNS,
} from "../tables/changes";
import { HEAD_CONTENT, HEAD_CONTENT_BYTES } from "../tables/heads";
import { type Cell, cellsOf, type Query, type Row } from "../tables/row";
import type { SqlDialect } from "../sql-dialect";
import type { Send } from "../write-connection";

/**
 * Performance device: prefix change rows. The change row of an append the database composed keeps
 * no copy of the plan: only the code points it kept (`content_kept_chars`) and its trailing
 * whitespace (`content_tail`), so an append writes its text once (in HEAD), not twice.
 *
 * INVARIANT: a prefix row's content is the first `content_kept_chars` code points of the content of
 * the change right after it (another append's, resolved the same way; a copy; the implementation-
 * started mark of its version; or HEAD), followed by its tail.
 *
 * ORDERING RULE: every write but an append first turns the prefix rows of the version it replaces
 * into copies of HEAD's content (`materializeChanges`, before the HEAD write), so a chain of prefix
 * rows always ends at a copy or at HEAD. A reader that cannot follow a chain (a version missing in
 * between, a deletion) gives the row no content, as it would for pruned history.
 *
 * Tested by test/unit/changes/prefix-changes.test.ts (every version's content derived back exactly from
 * composed appends) and test/integration/watch/watch.test.ts (the content of every change as WatchPlan
 * reads it).
 */

/**
 * How a change row holds the plan content after the change:
 * - `head`: a copy of the HEAD content the transaction wrote (made by the database);
 * - `none`: no content (a deletion);
 * - `prefix`: an append's, without a copy: the first `keptChars` code points of the next change's
 *   content, then `tail`.
 */
export type ChangeContent =
  | { readonly form: "head" }
  | { readonly form: "none" }
  | { readonly form: "prefix"; readonly keptChars: number; readonly tail: string };

/**
 * How the change row of a write holds the content after it. An append composed by the database
 * keeps no copy: its content is the kept part (`trimmedChars` code points, which every later append
 * keeps too) and its trailing whitespace. Anything else copies HEAD; a deletion has no content.
 *
 * The new content ends in its trimmed part, then the tail. The trimmed part reaches into the
 * appended suffix exactly when the suffix has a non-whitespace character (the kept prefix is the old
 * content's trimmed part); only then is the tail the suffix's last `contentBytes - trimmedBytes`
 * bytes, and the row can be a prefix.
 */
export function changeContentOf(head: HeadWrite): ChangeContent {
  if (head.deleted) return { form: "none" };
  const { content, trimmedChars, trimmedBytes } = head;
  if (typeof content === "string" || trimmedChars == null || trimmedBytes == null) return { form: "head" };
  if (trimmedBytes <= content.keepBytes) return { form: "head" };
  const suffix = Buffer.from(content.suffix, "utf8");
  const tailBytes = head.contentBytes - trimmedBytes;
  // Sizes that do not describe this composition get a copy: a prefix row must derive exactly.
  if (head.contentBytes !== content.keepBytes + suffix.length || tailBytes > suffix.length)
    return { form: "head" };
  const tail = suffix.subarray(suffix.length - tailBytes).toString("utf8");
  if ([...tail].length !== head.contentChars - trimmedChars) return { form: "head" };
  return { form: "prefix", keptChars: trimmedChars, tail };
}

/** The UTF-8 bytes of plan text a change row holding `content` stores. */
export function changeStoredBytes(content: ChangeContent, head: Pick<HeadWrite, "contentBytes">): number {
  if (content.form === "head") return head.contentBytes;
  return content.form === "prefix" ? Buffer.byteLength(content.tail, "utf8") : 0;
}

/** The values of a recorded change row's content columns (tables/changes.ts insertChange). */
export function changeContentValues(change: ChangeRecord, content: ChangeContent): ChangeContentValues {
  const copied = content.form === "head";
  const prefix = content.form === "prefix" ? [content.keptChars, content.tail] : [null, null];
  return {
    content: copied ? HEAD_CONTENT : "NULL",
    storedBytes: copied ? HEAD_CONTENT_BYTES : "?",
    parameters: {
      content: copied ? [change.taskId] : [],
      prefix,
      storedBytes: [
        copied ? change.taskId : content.form === "prefix" ? Buffer.byteLength(content.tail, "utf8") : 0,
      ],
    },
  };
}

/**
 * The ordering rule: turns the prefix rows of `version` into copies of HEAD's content; returns how
 * many it turned. Runs before the HEAD update, so HEAD_CONTENT is still the content of `version`.
 * The stored size is set first: MySQL evaluates SET left to right, on the values already assigned.
 */
export async function materializeChanges(
  send: Send,
  sql: SqlDialect,
  taskId: string,
  version: number,
): Promise<number> {
  const { affected } = await send(
    `UPDATE task_plan_changes SET stored_bytes = ${changeStoredBytesSql(sql)} + ${HEAD_CONTENT_BYTES},` +
      ` content = ${HEAD_CONTENT}` +
      " WHERE task_id = ? AND version = ? AND content IS NULL AND content_kept_chars IS NOT NULL",
    [taskId, taskId, taskId, version],
  );
  return affected;
}

/** What a row read with PREFIX_COLUMNS says of an append's content (kept when the row was later copied); null for any other row. */
export interface ContentPrefix {
  readonly keptChars: number;
  readonly tail: string;
}

export function prefixFromRow(cell: Cell): ContentPrefix | null {
  const kept = cell("content_kept_chars");
  if (kept === null || kept === undefined) return null;
  return { keptChars: Number(kept), tail: String(cell("content_tail") ?? "") };
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
 * next copy, or HEAD), else null. When a row's content cannot be derived, it stays null.
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

/**
 * The content of the change after `last` (a prefix row), if it may be derived from: the next row
 * not waiting for a copy, or else HEAD; with every version in between still recorded. Read in the
 * same snapshot as the page `last` ends.
 */
export async function contentAfter(query: Query, last: ChangeRecord): Promise<string | null> {
  const { taskId } = last;
  const [row] = (await query(
    `SELECT version, step, content, ${PREFIX_COLUMNS.join(", ")} FROM task_plan_changes WHERE task_id = ? AND ${AFTER_KEY}` +
      " AND (content IS NOT NULL OR content_kept_chars IS NULL) ORDER BY version, step LIMIT 1",
    [taskId, ...afterKey(last)],
  )) as Row[];
  let anchor: { version: number; content: string | null };
  if (row) {
    const cell = cellsOf(row, "");
    const key = changeKeyFromRow(cell);
    if (key.step !== 1 && prefixFromRow(cell) === null) return null;
    anchor = { version: key.version, content: row.content == null ? null : String(row.content) };
  } else {
    const [head] = (await query("SELECT version, content, deleted FROM task_plans WHERE task_id = ?", [
      taskId,
    ])) as Row[];
    if (!head || Number(head.deleted) !== 0) return null;
    anchor = { version: Number(head.version), content: String(head.content) };
  }
  const [between] = (await query(
    "SELECT COUNT(DISTINCT version) AS n FROM task_plan_changes WHERE task_id = ? AND version > ? AND version <= ?",
    [taskId, last.version, anchor.version],
  )) as Row[];
  return Number(between?.n) === anchor.version - last.version ? anchor.content : null;
}
