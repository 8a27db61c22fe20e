import { type PlanChange, PlanChangeKind, resumingWatch, type RetryPolicy } from "@taskplans/client";
import type { PlanGateway } from "./plan-gateway";

/**
 * How a subscription's WatchPlan stream is reopened after a retriable failure (a replica draining,
 * restarted or gone): forever, with backoff from 0.1 s to 5 s, after the last version received, so
 * that every change committed meanwhile is still delivered (the change table is the truth).
 */
export const RESUME_POLICY: Required<RetryPolicy> = {
  maxAttempts: Number.POSITIVE_INFINITY,
  initialBackoffMs: 100,
  maxBackoffMs: 5_000,
  multiplier: 2,
  jitter: 0.2,
  maxElapsedMs: Number.POSITIVE_INFINITY,
};

/** What a watch reports to its subscription. */
export interface PlanWatchEvents {
  /** A change was committed (or the plan's state is no longer known): the resource was updated. */
  updated(version: number | undefined): void;
  /** The watch ended for good (the task is gone, the token no longer valid): why, for the host's log. */
  ended(error: unknown): void;
}

/**
 * Follows one task's plan for a subscription until `cancel()`: each change after `knownVersion`
 * (undefined: the task has no plan now) is an `updated`; the first SNAPSHOT of a watch opened
 * without a version is one only when it differs from what was known. A watch that fell behind
 * (WATCH_TOO_SLOW) resumes after the last version seen, one whose history expired starts again
 * from a snapshot (reported as an update, since changes may be missing); any other failure that
 * retrying cannot mend ends it with `ended`.
 */
export function watchPlanForSubscription(
  plans: PlanGateway,
  taskId: string,
  knownVersion: number | undefined,
  events: PlanWatchEvents,
): { cancel(): void } {
  let known = knownVersion;
  let current: { cancel(): void } | null = null;
  let cancelled = false;
  const follow = async (after: number | undefined): Promise<void> => {
    const watch = resumingWatch(
      async (afterVersion) => plans.watchPlan({ taskId, afterVersion }),
      { afterVersion: after },
      RESUME_POLICY,
    );
    current = watch;
    try {
      for await (const change of watch as AsyncIterable<PlanChange>) {
        const version = change.plan?.version;
        const unchanged = change.kind === PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT && version === known;
        known = version ?? known;
        if (!unchanged) events.updated(version);
      }
    } catch (error) {
      if (cancelled) return;
      const reason = (error as { reason?: string }).reason;
      if (reason === "WATCH_TOO_SLOW") return follow(known);
      if (reason === "WATCH_HISTORY_EXPIRED") {
        events.updated(undefined);
        known = undefined;
        return follow(undefined);
      }
      events.ended(error);
    }
  };
  void follow(knownVersion);
  return {
    cancel() {
      cancelled = true;
      current?.cancel();
    },
  };
}
