/**
 * Background work that must never starve serving: a pass runs, then the next one is scheduled
 * `intervalMs` after it ended, so passes never overlap and ticks that fall due during a long pass do
 * not queue up to run back to back (a `setInterval` does both). The timer does not keep the process
 * alive. A pass that throws is the pass's own business: it should catch and log what it can retry.
 */
export function every(intervalMs: number, pass: () => Promise<unknown>): { stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      void pass()
        .catch(() => undefined)
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    },
  };
}
