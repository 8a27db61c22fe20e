import type { PlanCommit, RevisionMeta } from "../../plans/ports/records";
import { HEAD_CONTENT } from "../tables/heads";
import type { RevisionContent } from "../tables/revisions";
import type { WriteStatements } from "../transaction";

/**
 * Performance device: revision content held at HEAD (PLAN_REVISION_CONTENT_AT_HEAD). A write's new
 * or coalesced revision holds no copy of the plan; it is marked `content_at_head` and reads HEAD's
 * content, so an append stores its text once (in HEAD) instead of twice.
 *
 * INVARIANT: only a task's newest revision may be marked content_at_head, and while it is, HEAD
 * holds exactly that revision's content.
 *
 * ORDERING RULE: before HEAD moves past the newest revision (a new revision is written, or the plan
 * is deleted), that revision takes its own copy of HEAD's content, in the same transaction and
 * before the HEAD write (`beforeHeadMoves`). A revision written without content is written after
 * HEAD, so that a copy made by the database is of the new content.
 *
 * Tested by test/integration/write-path/content-at-head.test.ts ("revision content held at HEAD"), and by the
 * differential property test (write-paths.property.test.ts with PROPERTY_CONTENT_AT_HEAD=true)
 * against its pure model (test/harness/model/plan-model.ts).
 */

/**
 * How `revision` holds its content: the text it was given, else HEAD's (marked, when the device is
 * on), else a copy the database makes of the HEAD content the transaction just wrote.
 */
export function revisionContent(
  revision: RevisionMeta & { readonly content?: string },
  atHead: boolean,
): RevisionContent {
  if (revision.content !== undefined) return { sql: "?", parameters: [revision.content], atHead: false };
  return atHead
    ? { sql: "''", parameters: [], atHead: true }
    : { sql: HEAD_CONTENT, parameters: [revision.taskId], atHead: false };
}

/**
 * The ordering rule: gives the revision HEAD is about to move past its own copy of HEAD's content if
 * it is marked (whatever the setting says now: rows may have been marked while it was on). One row,
 * by the (task_id, revision_number) key: the statement never reads the task's history. Deferred.
 */
export function beforeHeadMoves(
  statements: WriteStatements,
  commit: Exclude<PlanCommit, { kind: "delete-task" }>,
): void {
  const newest =
    commit.kind === "delete"
      ? commit.head.latestRevisionNumber
      : commit.kind === "content" && commit.coalesces === null && commit.fenceVersion !== null
        ? commit.revision.number - 1
        : null;
  if (newest === null) return;
  statements.defer(
    `UPDATE task_plan_revisions SET content = ${HEAD_CONTENT}, content_at_head = 0` +
      " WHERE task_id = ? AND revision_number = ? AND content_at_head = 1",
    [commit.head.taskId, commit.head.taskId, newest],
  );
}
