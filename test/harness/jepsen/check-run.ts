import { checkHistory, type CheckSummary } from "./checker";
import type { OpRecord } from "./history";
import type { ResumingWatcher } from "./resuming-watcher";
import { readTask } from "./stored-task";
import { checkWatch } from "./watch-check";

/**
 * After a workload: replays the stored history of each task against every outcome (the checker) and
 * checks that each task's watcher (same order as `taskIds`) received every committed version once, in
 * order. Stops the watchers. Resolves the checker's counts and the changes the watchers received.
 */
export async function checkRun(
  history: readonly OpRecord[],
  databaseUrl: string,
  taskIds: readonly string[],
  watchers: readonly ResumingWatcher[],
): Promise<{ summary: CheckSummary; watched: number }> {
  const tasks = await Promise.all(taskIds.map((taskId) => readTask(databaseUrl, taskId)));
  const summary = checkHistory(history, tasks);
  let watched = 0;
  for (const [i, task] of tasks.entries()) {
    const watcher = watchers[i] as ResumingWatcher;
    await watcher.reach(task.head.version);
    await watcher.stop();
    watched += checkWatch(watcher.received, task, history, 1);
  }
  return { summary, watched };
}
