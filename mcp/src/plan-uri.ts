/**
 * The URI of a task's plan as an MCP resource: `taskplans://tasks/{task_id}/plan`, the task id
 * percent-encoded (task ids are printable ASCII and may hold `/`, `?` or `#`). Pure: no I/O.
 */
export const PLAN_URI_TEMPLATE = "taskplans://tasks/{task_id}/plan";

const PLAN_URI = /^taskplans:\/\/tasks\/([^/?#]+)\/plan$/;

/** The resource URI of `taskId`'s plan. */
export function planUri(taskId: string): string {
  return `taskplans://tasks/${encodeURIComponent(taskId)}/plan`;
}

/** The task id a plan URI names, or null when `uri` is not a plan URI of this server. */
export function taskIdOfUri(uri: string): string | null {
  const encoded = PLAN_URI.exec(uri)?.[1];
  if (encoded === undefined) return null;
  try {
    const taskId = decodeURIComponent(encoded);
    return taskId === "" ? null : taskId;
  } catch {
    return null; // a malformed percent-escape
  }
}
