import { createHash } from "node:crypto";
import type { RevisionMeta } from "../ports/records";

/**
 * The opaque token of one state of a revision row. The row version increases every time the row
 * changes (coalescing rewrites the newest revision in place) and never goes back, so the token
 * cannot repeat for a row (no ABA) and needs no content to compute.
 */
export function revisionVersion(revision: Pick<RevisionMeta, "id" | "rowVersion">): string {
  return createHash("sha256").update(`${revision.id}\n${revision.rowVersion}`).digest("hex").slice(0, 32);
}
