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

/**
 * A change notification: the task id, a tab, "version.step" of the change or "-" when it has none,
 * then optionally a tab and a payload (the change itself, so that watchers need not read it).
 */
export function changeMessage(
  taskId: string,
  key: { version: number; step: number } | null,
  payload = "",
): string {
  const head = `${taskId}\t${key === null ? "-" : `${key.version}.${key.step}`}`;
  return payload === "" ? head : `${head}\t${payload}`;
}

/** The task id of a changeMessage, read without parsing the rest ("" when it has none). */
export function changeMessageTaskId(message: string): string {
  const tab = message.indexOf("\t");
  return tab < 0 ? "" : message.slice(0, tab);
}

/** Parses changeMessage; null for anything else. */
export function parseChangeMessage(message: string): {
  taskId: string;
  key: { version: number; step: 0 | 1 } | null;
  payload: string;
} | null {
  const match = /^([^\t]+)\t(?:-|(\d+)\.([01]))(?:\t([\s\S]*))?$/.exec(message);
  if (!match?.[1]) return null;
  const [, taskId, version, step, payload = ""] = match;
  if (version === undefined) return { taskId, key: null, payload };
  return { taskId, key: { version: Number(version), step: step === "1" ? 1 : 0 }, payload };
}
