import { AddColumn } from "./add-column";

// `stored_bytes`: the UTF-8 bytes of plan text a change row holds (its copy of the content and its
// tail), so that the task's history budget counts the change history as well as the revisions
// without measuring every text. NULL in rows written before this migration (or by a replica of the
// previous release during a rolling upgrade): the budget measures those.

/** The stored size of each change row's text, for both dialects. */
export class ChangeStoredBytes1765000000000 extends AddColumn {
  readonly name = "ChangeStoredBytes1765000000000";

  constructor() {
    super("task_plan_changes", "stored_bytes", { mysql: "BIGINT NULL", sqlite: "INTEGER NULL" });
  }
}
