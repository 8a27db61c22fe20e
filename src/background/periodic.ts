/** The non-overlapping timer lives in @taskplans/tls, which the MCP server shares; re-exported here. */
export { every } from "@taskplans/tls";

/**
 * Resolves after the event loop has served what is waiting (I/O callbacks, timers). better-sqlite3
 * answers synchronously, so a loop of awaited queries never leaves the microtask queue without it.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
