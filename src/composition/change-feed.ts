import type { Tracer } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { Config } from "../config/config";
import { redisBroadcast } from "../locking/redis-broadcast";
import type { PlanMetrics } from "../observability/metrics";
import { tracedBroadcast } from "../observability/traced-ports";
import type { PlanStore } from "../plans/ports/plan-store";
import type { Dialect } from "../storage/sql-dialect";
import { broadcastChangeBus, type ChangeBus, localChangeBus } from "../watch/change-bus";
import { ChangeHub } from "../watch/change-hub";
import { ChangePruner, DEFAULT_PRUNE_BOUNDS, EMBEDDED_PRUNE_BOUNDS } from "../watch/change-pruner";

/**
 * The start's change step: changes are recorded by every write's transaction, announced after
 * commit (over Redis when replicas share it), fanned out to this replica's watchers (the hub), and
 * pruned in the background (the pruner, a commit listener too).
 */
export function startChangeFeed(
  config: Config,
  deps: {
    readonly store: PlanStore;
    readonly logger: Logger;
    readonly clock: () => Date;
    readonly dialect: Dialect;
    readonly metrics: PlanMetrics;
    readonly tracer: Tracer | null;
  },
): { readonly hub: ChangeHub; readonly bus: ChangeBus; readonly pruner: ChangePruner } {
  const { store, logger, clock, dialect, metrics, tracer } = deps;
  const hub = new ChangeHub(store, logger, config.changes.pollIntervalMs);
  const notifications = () => {
    const broadcast = redisBroadcast(
      { urls: config.changes.notifyUrls, keyPrefix: config.redis?.keyPrefix ?? "taskplans" },
      logger,
    );
    return tracer ? tracedBroadcast(broadcast, tracer) : broadcast;
  };
  const bus =
    config.changes.notifyUrls.length > 0 ? broadcastChangeBus(hub, notifications()) : localChangeBus(hub);
  const pruner = new ChangePruner(
    store,
    {
      maxAgeMs: config.changes.maxAgeMs,
      maxVersions: config.changes.maxVersions,
      intervalMs: config.changes.pruneIntervalMs,
    },
    logger,
    clock,
    dialect === "sqlite" ? EMBEDDED_PRUNE_BOUNDS : DEFAULT_PRUNE_BOUNDS,
    (rows) => metrics.changesPruned(rows),
    (pass) => metrics.changesPrunePass(pass.complete),
  );
  return { hub, bus, pruner };
}
