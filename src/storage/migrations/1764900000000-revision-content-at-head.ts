import { AddColumn } from "./add-column";

// `content_at_head = 1` marks the newest revision of a live plan whose content is HEAD's (its own
// `content` column is then empty): a coalescing write rewrites the plan once, in HEAD. A write that
// starts a new revision, or deletes the plan, first copies HEAD's content into the marked row
// (PLAN_REVISION_CONTENT_AT_HEAD; rows written before this migration, or with it off, are copies).

/** The content-at-HEAD mark of task_plan_revisions, for both dialects. */
export class RevisionContentAtHead1764900000000 extends AddColumn {
  readonly name = "RevisionContentAtHead1764900000000";

  constructor() {
    super("task_plan_revisions", "content_at_head", {
      mysql: "TINYINT NOT NULL DEFAULT 0",
      sqlite: "INTEGER NOT NULL DEFAULT 0",
    });
  }
}
