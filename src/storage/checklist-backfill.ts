import type { DataSource } from "typeorm";
import type { StoredChecklist } from "../plans/ports/records";
import { utf8Length } from "../text/unicode";

/** What a backfill did: the plans whose checklist it counted. */
export interface BackfillOutcome {
  readonly counted: number;
}

// Plans read per statement: at most 50 x 256 KiB of text in memory at once.
const BATCH = 50;

const SELECT_UNCOUNTED =
  "SELECT task_id, version, content, content_bytes FROM task_plans" +
  " WHERE deleted = 0 AND (checklist_version IS NULL OR checklist_version <> version" +
  " OR checklist_checked IS NULL OR checklist_total IS NULL) AND task_id > ?" +
  " ORDER BY task_id LIMIT ?";

// Fenced on the version read: a write committed since (which counted its own, or a replica of the
// previous release's, which did not) is left as it is.
const STORE_COUNT =
  "UPDATE task_plans SET checklist_checked = ?, checklist_total = ?, checklist_open_end = ?," +
  " checklist_version = ? WHERE task_id = ? AND version = ?";

/**
 * Counts the checklist of every live plan that has none counted at its version (written before the
 * service counted it, or by a replica of an earlier release), in task id order, a batch at a time,
 * each plan's figures stored fenced on the version read. Run by `migrate` after the migrations (and
 * by a replica migrating on start), so that a list of tasks shows every plan's progress after an
 * upgrade; revisions written before keep none. `count` is the write path's own (plans/writes). A
 * text whose stored size is not its recorded one is skipped (the write path reports it).
 */
export async function countUncountedChecklists(
  dataSource: DataSource,
  count: (text: string) => Promise<StoredChecklist>,
): Promise<BackfillOutcome> {
  let after = "";
  let counted = 0;
  for (;;) {
    const rows = (await dataSource.query(SELECT_UNCOUNTED, [after, BATCH])) as {
      task_id: string;
      version: number | string;
      content: string;
      content_bytes: number | string;
    }[];
    for (const row of rows) {
      if (utf8Length(row.content) !== Number(row.content_bytes)) continue;
      const checklist = await count(row.content);
      const version = Number(row.version);
      const { checked, total, openEnd } = checklist;
      await dataSource.query(STORE_COUNT, [checked, total, openEnd ? 1 : 0, version, row.task_id, version]);
      counted += 1;
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < BATCH) return { counted };
    after = last.task_id;
  }
}
