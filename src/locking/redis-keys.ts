/**
 * The one place that builds Redis keys. Each key hash-tags the task id, so one task's keys live in
 * one Redis Cluster slot; braces and '%' in ids are percent-encoded so an id cannot move the tag.
 */
export function redisKeys(prefix: string) {
  const tag = (taskId: string) => `{${taskId.replace(/[{}%]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}}`;
  return {
    /** The Redlock resource serializing writes to one task. */
    lock: (taskId: string) => `${prefix}:lock:${tag(taskId)}`,
    /** Pub/sub channel announcing released locks (message: the task id), to wake waiters at once. */
    released: () => `${prefix}:released`,
    /** Pub/sub channel where a replica waiting for a lock says so (message: waitingMessage). */
    waiting: () => `${prefix}:waiting`,
    /** Pub/sub channel announcing committed plan changes (message: changeMessage). */
    changes: () => `${prefix}:changes`,
  };
}

/** What a replica waiting for a task's lock publishes: its instance id, a space, the task id. */
export function waitingMessage(instanceId: string, taskId: string): string {
  return `${instanceId} ${taskId}`;
}

/** Parses waitingMessage (instance ids have no space); null for anything else. */
export function parseWaitingMessage(message: string): { instanceId: string; taskId: string } | null {
  const space = message.indexOf(" ");
  if (space <= 0 || space === message.length - 1) return null;
  return { instanceId: message.slice(0, space), taskId: message.slice(space + 1) };
}
