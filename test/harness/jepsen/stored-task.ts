import type { TaskHistory } from "./checker";
import { execSql } from "../databases/sql";

/**
 * Reads a task's stored history (HEAD and every revision's content) straight from the database, for
 * the checker to replay the workload against.
 */
export async function readTask(databaseUrl: string, taskId: string): Promise<TaskHistory> {
  const [head] = (await execSql(
    databaseUrl,
    "SELECT content, version, latest_revision_number FROM task_plans WHERE task_id = ?",
    [taskId],
  )) as { content: string; version: number; latest_revision_number: number }[];
  // With PLAN_REVISION_CONTENT_AT_HEAD the newest revision may hold its content as HEAD's, and only
  // it (checked here, beside the history checks).
  const revisions = (await execSql(
    databaseUrl,
    "SELECT r.revision_number, r.content_at_head," +
      " CASE WHEN r.content_at_head = 1 THEN p.content ELSE r.content END AS content" +
      " FROM task_plan_revisions r JOIN task_plans p ON p.task_id = r.task_id WHERE r.task_id = ?" +
      " ORDER BY r.revision_number",
    [taskId],
  )) as { revision_number: number; content_at_head: number; content: string }[];
  const marked = revisions
    .filter((r) => Number(r.content_at_head) === 1)
    .map((r) => Number(r.revision_number));
  expect(marked.every((number) => number === Number(head?.latest_revision_number))).toBe(true);
  return {
    taskId,
    head: {
      content: head?.content ?? "",
      version: Number(head?.version),
      latestRevisionNumber: Number(head?.latest_revision_number),
    },
    revisions: revisions.map((r) => ({ number: Number(r.revision_number), content: r.content })),
  };
}
