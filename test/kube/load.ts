import { checkRun } from "../harness/jepsen/check-run";
import type { OpRecord } from "../harness/jepsen/history";
import { ResumingWatcher } from "../harness/jepsen/resuming-watcher";
import { startWorkload } from "../harness/jepsen/workload";
import { connect } from "../harness/calls/rpc";
import { sleep } from "./cluster";

/** What a scenario's action did, for the printed line. */
export type Evidence = string;

/** Counts of one load run, for the scenario's own assertions. */
export interface LoadResult {
  readonly ok: number;
  /** Calls answered during the action that did not succeed, by ErrorInfo reason (or transport code). */
  readonly errorsDuring: Readonly<Record<string, number>>;
  readonly longestGapMs: number;
  readonly history: readonly OpRecord[];
}

/** Steady load before and after the action, so the checks see the system settle on both sides. */
const SETTLE_MS = 3_000;

/**
 * Runs the fault suite's list-append workload (appends, versioned replaces, exact edits on three hot
 * tasks from six clients) and a resuming WatchPlan watcher per task against the release's Service
 * while `action` runs, then checks the stored history against every acknowledged write (nothing lost
 * or duplicated, one serial history per task) and that every watcher saw every committed version
 * once, in order. Prints the errors by reason during the action and the longest gap without a
 * successful write.
 */
export async function underLoad(
  name: string,
  target: { host: string; port: number },
  databaseUrl: string,
  action: () => Promise<Evidence>,
): Promise<LoadResult> {
  const runId = Date.now().toString(36);
  const taskIds = ["hot-a", "hot-b", "hot-c"].map((t) => `${t}-${runId}`);
  const setup = connect(target.port, undefined, target.host);
  try {
    for (const taskId of taskIds) {
      await setup.tasks.createTask({ taskId, workspaceId: "ws" });
      await setup.plans.createPlan({ taskId, content: "# Plan\nstatus: 0\n" });
    }
  } finally {
    setup.close();
  }
  // Three connections through the Service: kube-proxy spreads them over the pods.
  const targets = [target, target, target];
  const watchers = taskIds.map((taskId) => new ResumingWatcher(targets, taskId, 1));
  let stopping = false;
  const workload = startWorkload({
    ports: targets.map((t) => t.port),
    hosts: targets.map((t) => t.host),
    taskIds,
    clients: 6,
    operations: Number.MAX_SAFE_INTEGER,
    deadlineMs: 5_000,
    stop: () => stopping,
  });
  try {
    await sleep(SETTLE_MS);
    const from = Date.now();
    const evidence = await action();
    const to = Date.now();
    await sleep(SETTLE_MS);
    stopping = true;
    const history = await workload.done();

    const { summary, watched } = await checkRun(history, databaseUrl, taskIds, watchers);
    const during = history.filter((op) => (op.endedAt ?? 0) >= from && (op.endedAt ?? 0) <= to);
    const reasons = new Map<string, number>();
    for (const op of during.filter((o) => o.outcome !== "ok"))
      reasons.set(op.reason ?? "", (reasons.get(op.reason ?? "") ?? 0) + 1);
    const longestGapMs = longestGap(history, from, to);
    console.log(
      `[kube] ${name}: ${evidence}; ${((to - from) / 1000).toFixed(1)} s; ` +
        `${summary.operations} ops in all, ${summary.ok} ok, ${summary.failed} failed, ${summary.unknown} unknown ` +
        `(${summary.unknownApplied} of them applied), ${summary.revisions} revisions checked; during the action ` +
        `${during.length} ops, errors by reason ${JSON.stringify(Object.fromEntries(reasons))}, ` +
        `longest gap without a successful write ${longestGapMs} ms; watchers received ${watched} changes, ` +
        `each committed version once, in order (${watchers.map((w) => w.describe()).join("; ")})`,
    );
    return {
      ok: summary.ok,
      errorsDuring: Object.fromEntries(reasons),
      longestGapMs,
      history,
    };
  } finally {
    stopping = true;
    await workload.done();
    for (const watcher of watchers) await watcher.stop();
  }
}

/** The longest stretch within [from, to] with no acknowledged write. */
function longestGap(history: readonly OpRecord[], from: number, to: number): number {
  const oks = history
    .filter((op) => op.outcome === "ok" && op.endedAt !== undefined)
    .map((op) => op.endedAt as number)
    .sort((a, b) => a - b);
  let previous = from;
  let longest = 0;
  for (const at of oks) {
    if (at < from) continue;
    if (at > to) {
      longest = Math.max(longest, at - previous);
      break;
    }
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return longest;
}
