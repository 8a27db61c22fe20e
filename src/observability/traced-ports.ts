import { context, trace, type Tracer } from "@opentelemetry/api";
import type { Broadcast } from "../plans/ports/broadcast";
import type { TaskLock } from "../plans/ports/task-lock";
import type { PlanMetrics } from "./metrics";
import { recordSpan } from "./tracing";

// Decorators applied only when tracing is on (app.ts), so that tracing off costs nothing. Each span
// is a child of the call's span; none carries plan content.

/**
 * A `lock wait` span from asking for a task's lock until the write starts under it. The write then
 * runs in the asking call's context, whichever caller's code path the lock invokes it from.
 */
export function tracedLock(lock: TaskLock, tracer: Tracer): TaskLock {
  return {
    withLock(taskId, waitMs, work) {
      const asking = context.active();
      const asked = Date.now();
      let started = false;
      return lock
        .withLock(taskId, waitMs, (lease) => {
          started = true;
          context.with(asking, () =>
            recordSpan(tracer, "lock wait", asked, { "taskplans.lock.obtained": true }),
          );
          return context.with(asking, () => work(lease));
        })
        .catch((error: unknown) => {
          if (!started)
            context.with(asking, () =>
              recordSpan(tracer, "lock wait", asked, { "taskplans.lock.obtained": false }, true),
            );
          throw error;
        });
    },
    close: () => lock.close(),
  };
}

/** The write transaction's span (`db transaction`), from the timing the metrics already receive. */
export function tracedMetrics(
  metrics: PlanMetrics,
  tracer: Tracer,
  database: "sqlite" | "mysql",
): PlanMetrics {
  return {
    ...metrics,
    transaction(seconds, outcome) {
      metrics.transaction(seconds, outcome);
      recordSpan(
        tracer,
        "db transaction",
        Date.now() - seconds * 1000,
        {
          "db.system.name": database === "mysql" ? "mysql" : "sqlite",
          "taskplans.transaction.outcome": outcome,
        },
        outcome === "rolled_back",
      );
    },
  };
}

/**
 * A `redis publish` span per message a call sends to the other replicas (a write's change). What the
 * background sends (the replica's repeated announcement of the tasks it watches) belongs to no call
 * and records none: it would be a root trace every few seconds.
 */
export function tracedBroadcast(broadcast: Broadcast, tracer: Tracer): Broadcast {
  return {
    publish(message) {
      const started = Date.now();
      broadcast.publish(message);
      if (trace.getActiveSpan() === undefined) return;
      recordSpan(tracer, "redis publish", started, {
        "db.system.name": "redis",
        "db.operation.name": "PUBLISH",
      });
    },
    listen: (onMessage) => broadcast.listen(onMessage),
    close: () => broadcast.close(),
  };
}
