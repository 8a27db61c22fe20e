import type { RevisionMeta } from "../ports/records";
import type { Author } from "./author";

/**
 * Whether a write updates the newest revision in place instead of adding one (kandev semantics
 * section 3.2). All must hold: the write is not forced (first write after create or delete,
 * acknowledged reduction, revert), a newest revision exists and is not a revert/restore marker,
 * it has the same author kind and name, and it was last updated strictly less than the window
 * ago. A window of 0 never coalesces.
 */
export function shouldCoalesce(input: {
  readonly latest: RevisionMeta | null;
  readonly author: Author;
  readonly now: Date;
  readonly windowMs: number;
  readonly forceNew: boolean;
}): boolean {
  const { latest, author, now, windowMs, forceNew } = input;
  if (forceNew || latest === null || windowMs <= 0) return false;
  if (latest.revertOfRevisionId !== null) return false;
  // A merged write's revision keeps its marker true: nothing is coalesced into it.
  if (latest.merge) return false;
  if (latest.authorKind !== author.kind || latest.authorName !== author.name) return false;
  return now.getTime() - latest.updatedAt.getTime() < windowMs;
}
