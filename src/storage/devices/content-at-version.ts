import type { VersionContent } from "../../plans/ports/records";
import { afterKey, changeFromRow, selectChangePage, SELECT_OLDEST_CHANGE_VERSION } from "../tables/changes";
import { cellsOf, type Query, type Row } from "../tables/row";
import { contentAfter, prefixFromRow, resolvePrefixes } from "./prefix-changes";

/**
 * The plan content at a past version, from the change history (GetPlanChanges, a merge's base).
 *
 * INVARIANT: the answer is the content the write of that version left, exactly, or no answer. The
 * change row of a version (step 0) holds the content after it: a copy, nothing (a deletion: empty),
 * or an append's prefix, derived as the prefix change rows device derives it (devices/
 * prefix-changes.ts: from the next copy or HEAD, with every version in between still recorded).
 * A version without its row (pruned by age, trimmed to the history budget, never written, ahead of
 * the plan) or whose prefix cannot be followed is not derivable; nothing is guessed from revisions,
 * which coalescing rewrites in place.
 *
 * Read in one snapshot with HEAD: under the task's row lock in a write, in a consistent read
 * otherwise (change-log.ts).
 */
export async function contentAtVersion(
  query: Query,
  taskId: string,
  version: number,
  head: { readonly version: number; readonly deleted: boolean; readonly content: string | null } | null,
): Promise<VersionContent> {
  const content = await derive(query, taskId, version, head);
  if (content !== null) return { derivable: true, version, content };
  return { derivable: false, version, oldestVersion: await oldestDerivable(query, taskId, head) };
}

async function derive(
  query: Query,
  taskId: string,
  version: number,
  head: { readonly version: number; readonly deleted: boolean; readonly content: string | null } | null,
): Promise<string | null> {
  if (head !== null && !head.deleted && head.version === version && head.content !== null)
    return head.content;
  const rows = (await query(selectChangePage(true), [
    taskId,
    ...afterKey({ version: version - 1, step: 1 }),
    1,
  ])) as Row[];
  const row = rows[0];
  if (!row) return null;
  const cell = cellsOf(row, "");
  const change = changeFromRow(cell);
  if (change.version !== version || change.step !== 0) return null;
  if (change.kind === "deleted") return "";
  if (change.content !== null) return change.content;
  const prefix = prefixFromRow(cell);
  if (prefix === null) return null;
  const next = await contentAfter(query, change);
  return resolvePrefixes([{ change, prefix }], next)[0]?.content ?? null;
}

// The oldest recorded version, when its content can be derived (else null: only HEAD's can be
// answered for certain, and a caller reads the plan again).
async function oldestDerivable(
  query: Query,
  taskId: string,
  head: { readonly version: number; readonly deleted: boolean; readonly content: string | null } | null,
): Promise<number | null> {
  const [row] = (await query(SELECT_OLDEST_CHANGE_VERSION, [taskId])) as { oldest: number | string | null }[];
  const oldest = row?.oldest;
  if (oldest === null || oldest === undefined) return null;
  const version = Number(oldest);
  if (head !== null && version >= head.version) return null;
  return (await derive(query, taskId, version, head)) === null ? null : version;
}
