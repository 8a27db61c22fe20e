// The console's pure parts: what the page shows of revisions, diffs and sizes, as plain strings and
// classes that main.ts inserts as text (never HTML). No DOM here: unit-tested in Node
// (test/unit/console/console-view-model.test.ts).

/** A protobuf Timestamp as protobuf-es gives it. */
export interface TimestampLike {
  readonly seconds: bigint;
  readonly nanos: number;
}

/** The fields of a PlanRevision the revision list shows. */
export interface RevisionLike {
  readonly id: string;
  readonly revisionNumber: bigint;
  readonly authorKind: number;
  readonly authorName: string;
  readonly revertOfRevisionId?: string;
  readonly createdAt?: TimestampLike;
  readonly updatedAt?: TimestampLike;
  readonly merge?: { readonly fromVersion: bigint; readonly toVersion: bigint };
  readonly contentBytes: bigint;
  readonly checklist?: StoredProgress;
}

/**
 * A checklist progress as the service stores it (ChecklistProgress, uint64 as protobuf-es gives
 * them: the HTTP door's JSON sends them as strings, and leaves a zero out, so a plan without a
 * checklist arrives as `{}`, read as 0 of 0).
 */
export interface StoredProgress {
  readonly checked: bigint;
  readonly total: bigint;
}

/** One row of the revision list. */
export interface RevisionRow {
  readonly id: string;
  readonly number: string;
  readonly author: string;
  readonly kind: string;
  readonly time: string;
  /** Short labels: "coalesced", "revert of #3", "merge of v4..v6". */
  readonly markers: readonly string[];
  readonly size: string;
  /** The revision's checklist progress: "2 of 3 done", "none", or "" when it was not counted. */
  readonly checklist: string;
}

/** AuthorKind of taskplans.v1 by number (1 agent, 2 user). */
export function authorKindLabel(kind: number): string {
  return kind === 1 ? "agent" : kind === 2 ? "user" : "unknown";
}

/** PlanChangeKind of taskplans.v1 for the snapshot a watch without after_version starts with. */
const SNAPSHOT_KIND = 1;

/**
 * Who wrote a watched change, as the status line names them: null for a snapshot (a read of the
 * plan, which the server sends with an unspecified author and no name) and for a change that names
 * nobody, so the line never says "by" before an empty name.
 */
export function writerName(change: {
  readonly kind: number;
  readonly author?: { readonly name: string };
}): string | null {
  if (change.kind === SNAPSHOT_KIND) return null;
  return change.author?.name ? change.author.name : null;
}

/** A Timestamp as an ISO 8601 UTC time to the second ("" when absent). */
export function formatTime(time: TimestampLike | undefined): string {
  if (!time) return "";
  return `${new Date(Number(time.seconds) * 1000).toISOString().slice(0, 19)}Z`;
}

function millis(time: TimestampLike | undefined): number {
  return time ? Number(time.seconds) * 1000 + Math.floor(time.nanos / 1e6) : 0;
}

/** A size in UTF-8 bytes, grouped by thousands: "1,234 bytes". */
export function formatBytes(bytes: bigint | number): string {
  const n = BigInt(bytes);
  const grouped = n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${grouped} ${n === 1n ? "byte" : "bytes"}`;
}

/**
 * A plan's checklist progress as the plan's line shows it, "3 of 7 done", or null for a plan without
 * a checklist (no task-list item), which shows none.
 */
export function progressLabel(progress: { readonly checked: number; readonly total: number }): string | null {
  return progress.total === 0 ? null : `${progress.checked} of ${progress.total} done`;
}

/**
 * The checklist progress the plan's line shows: the figure the service counted when the plan was
 * written, when the answer carries it (Plan.checklist, in GetPlan's answer and each watched change);
 * else `count()`, counted here from the content (a plan written before the service counted it).
 */
export function shownProgress(
  stored: StoredProgress | undefined,
  count: () => { readonly checked: number; readonly total: number },
): { readonly checked: number; readonly total: number } {
  return stored ? { checked: Number(stored.checked), total: Number(stored.total) } : count();
}

/** A revision's stored progress as its row shows it: "2 of 3 done", "none" (no checklist), "" (not counted). */
export function revisionProgress(stored: StoredProgress | undefined): string {
  if (!stored) return "";
  return progressLabel({ checked: Number(stored.checked), total: Number(stored.total) }) ?? "none";
}

/**
 * The rows of a revision list (newest first, as ListPlanRevisions gives them). A revision that was
 * updated after it was created took a coalesced write; a revert names the revision it copies by number
 * when that revision is in the list.
 */
export function revisionRows(revisions: readonly RevisionLike[]): RevisionRow[] {
  const numbers = new Map(revisions.map((r) => [r.id, r.revisionNumber.toString()]));
  return revisions.map((r) => {
    const markers: string[] = [];
    if (millis(r.updatedAt) > millis(r.createdAt)) markers.push("coalesced");
    if (r.revertOfRevisionId !== undefined) {
      const copied = numbers.get(r.revertOfRevisionId);
      markers.push(copied ? `revert of #${copied}` : "revert");
    }
    if (r.merge) markers.push(`merge of v${r.merge.fromVersion}..v${r.merge.toVersion}`);
    return {
      id: r.id,
      number: r.revisionNumber.toString(),
      author: r.authorName,
      kind: authorKindLabel(r.authorKind),
      time: formatTime(r.updatedAt ?? r.createdAt),
      markers,
      size: formatBytes(r.contentBytes),
      checklist: revisionProgress(r.checklist),
    };
  });
}

/** How a line of a unified diff is shown. */
export type DiffLineKind = "header" | "hunk" | "added" | "removed" | "context" | "note";

/** One line of a diff as the page shows it. */
export interface DiffLine {
  readonly kind: DiffLineKind;
  /**
   * The line without its "\n"; a carriage return shows as "␍" so line-ending changes are visible, and
   * a bidi control as its code point (visibleBidiControls), so a diff line reads as it is stored.
   */
  readonly text: string;
}

function kindOf(line: string, inHunk: boolean): DiffLineKind {
  if (!inHunk && (line.startsWith("--- ") || line.startsWith("+++ "))) return "header";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("\\")) return "note";
  if (line.startsWith("+")) return "added";
  if (line.startsWith("-")) return "removed";
  return "context";
}

/**
 * The lines of a PlanDiff's unified_diff (proto/taskplans/v1/plan_service.proto, PlanDiff) for
 * display: split on "\n" only (a stored "\r\n" keeps its "\r", shown as "␍"), each classified.
 * An empty diff (equal contents) gives no lines.
 */
export function diffLines(unified: string): DiffLine[] {
  if (unified === "") return [];
  const lines = unified.endsWith("\n") ? unified.slice(0, -1).split("\n") : unified.split("\n");
  let inHunk = false;
  return lines.map((line) => {
    const kind = kindOf(line, inHunk);
    if (kind === "hunk") inHunk = true;
    return { kind, text: visibleBidiControls(line.replace(/\r/g, "␍")) };
  });
}

/** The summary line of a diff: "+3 −1 lines, 120 → 180 bytes". */
export function diffSummary(diff: {
  linesAdded: bigint;
  linesRemoved: bigint;
  oldBytes: bigint;
  newBytes: bigint;
}): string {
  return `+${diff.linesAdded} −${diff.linesRemoved} lines, ${formatBytes(diff.oldBytes)} → ${formatBytes(diff.newBytes)}`;
}

// Unicode's Bidi_Control characters: the arabic letter mark, the left-to-right and right-to-left
// marks, the embeddings and overrides (LRE RLE PDF LRO RLO) and the isolates (LRI RLI FSI PDI).
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/**
 * `text` with each bidi control shown as its code point, `[U+202E]`: in a name or title an override
 * would otherwise reverse what follows it ("Ann\u202Eevil" reads "Annlive"), and a mark is invisible.
 */
export function visibleBidiControls(text: string): string {
  return text.replace(
    BIDI_CONTROLS,
    (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}]`,
  );
}

/** The task id a console address names: `/console/#task=<id>` (a fragment never reaches the server). */
export function taskIdFromHash(hash: string): string {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  return params.get("task") ?? "";
}
