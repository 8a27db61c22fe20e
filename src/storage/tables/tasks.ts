import { Column, Entity, PrimaryColumn } from "typeorm";
import type { ListedTask, TaskRecord } from "../../plans/ports/records";
import { type Cell, date, flag, placeholders, str, stampedChecklist } from "./row";

/**
 * The `tasks` table: its columns, its row codec, and its statements. A task's other rows reference
 * it; deleting a task deletes them first (locked-task.ts).
 */
export const TASK_COLUMNS = ["id", "workspace_id", "title", "created_at"] as const;

export function taskFromRow(cell: Cell): TaskRecord {
  return {
    id: str(cell("id")),
    workspaceId: str(cell("workspace_id")),
    title: str(cell("title")),
    createdAt: date(cell("created_at")),
  };
}

export const SELECT_TASK = `SELECT ${TASK_COLUMNS.join(", ")} FROM tasks WHERE id = ?`;

/**
 * The columns of a task as a read of tasks gives it (ListedTask), from `tasks` joined to its HEAD
 * (LISTED_TASK_FROM): the task's, then its plan's checklist and whether the plan is deleted.
 */
export const LISTED_TASK_COLUMNS = [
  ...TASK_COLUMNS.map((column) => `t.${column}`),
  "p.checklist_checked",
  "p.checklist_total",
  "p.checklist_version",
  "p.version",
  "p.deleted",
].join(", ");

/** Tasks (`t`) with their HEAD rows (`p`, absent for a task that never had a plan). */
export const LISTED_TASK_FROM = "tasks t LEFT JOIN task_plans p ON p.task_id = t.id";

/** One task as a read of tasks gives it (ListedTask), by id. */
export const SELECT_LISTED_TASK = `SELECT ${LISTED_TASK_COLUMNS} FROM ${LISTED_TASK_FROM} WHERE t.id = ?`;

/** A row of LISTED_TASK_COLUMNS: the task, and its live plan's checklist when it was counted. */
export function listedTaskFromRow(cell: Cell): ListedTask {
  return {
    ...taskFromRow(cell),
    checklist: flag(cell("deleted")) ? null : stampedChecklist(cell, "checklist_version", "version"),
  };
}

export const INSERT_TASK = `INSERT INTO tasks (${TASK_COLUMNS.join(", ")}) VALUES (${placeholders(TASK_COLUMNS.length)})`;

/** The values of TASK_COLUMNS, in order. */
export function taskValues(task: TaskRecord): unknown[] {
  return [task.id, task.workspaceId, task.title, task.createdAt.getTime()];
}

export const DELETE_TASK = "DELETE FROM tasks WHERE id = ?";

// The table as TypeORM declares it: the schema the migrations must leave
// (test/integration/storage/migration-replay.test.ts compares them). Never used to read or write
// rows: the codec above does.
/** Row of `tasks`. Schema: migrations/ (entities never synchronize). */
@Entity({ name: "tasks" })
export class TaskEntity {
  @PrimaryColumn({ type: "varchar", length: 128 })
  id: string;

  @Column({ name: "workspace_id", type: "varchar", length: 128 })
  workspaceId: string;

  @Column({ type: "varchar", length: 1000 })
  title: string;

  @Column({ name: "created_at", type: "bigint" })
  createdAt: number;
}
