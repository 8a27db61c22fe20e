import { AsyncLocalStorage } from "node:async_hooks";

const deadlines = new AsyncLocalStorage<number>();

/** Runs `work` with the caller's deadline (epoch ms) in scope; Infinity means none. */
export function withCallDeadline<T>(deadlineMs: number, work: () => T): T {
  return deadlines.run(deadlineMs, work);
}

/** Milliseconds left before the current call's deadline (Infinity when none is in scope). */
export function remainingCallMs(): number {
  const deadline = deadlines.getStore();
  return deadline === undefined ? Number.POSITIVE_INFINITY : deadline - Date.now();
}
