import type { Logger } from "pino";
import { every } from "../../background/periodic";
import type { ServingConditions } from "./serving-conditions";

/**
 * Polls the database and sets the `database` condition: NOT_SERVING while it does not answer,
 * SERVING once it does again. `stop()` ends polling and clears `running` (shutdown: NOT_SERVING).
 */
export function startHealthMonitor(
  ping: () => Promise<void>,
  serving: ServingConditions,
  intervalMs: number,
  logger: Logger,
): { stop(): void } {
  let reachable = true;
  let stopped = false;
  const check = async () => {
    let ok = true;
    try {
      await ping();
    } catch {
      ok = false;
    }
    if (stopped || ok === reachable) return;
    reachable = ok;
    serving.set("database", ok);
    logger[ok ? "info" : "error"]({ serving: ok }, ok ? "database reachable again" : "database unreachable");
  };
  // A ping that hangs (a partitioned database) delays the next one instead of piling up beside it.
  const timer = every(intervalMs, check);
  return {
    stop() {
      stopped = true;
      timer.stop();
      serving.set("running", false);
    },
  };
}
