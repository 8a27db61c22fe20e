import type { HealthImplementation } from "grpc-health-check";
import type { Logger } from "pino";
import { every } from "../background/periodic";
import { setHealth } from "./server";

/**
 * Polls the database and reports NOT_SERVING while it does not answer, SERVING once it does again.
 * `stop()` ends polling and leaves the server NOT_SERVING (shutdown).
 */
export function startHealthMonitor(
  ping: () => Promise<void>,
  health: HealthImplementation,
  intervalMs: number,
  logger: Logger,
): { stop(): void } {
  let serving = true;
  let stopped = false;
  const check = async () => {
    let ok = true;
    try {
      await ping();
    } catch {
      ok = false;
    }
    if (stopped || ok === serving) return;
    serving = ok;
    setHealth(health, ok);
    logger[ok ? "info" : "error"]({ serving: ok }, ok ? "database reachable again" : "database unreachable");
  };
  // A ping that hangs (a partitioned database) delays the next one instead of piling up beside it.
  const timer = every(intervalMs, check);
  return {
    stop() {
      stopped = true;
      timer.stop();
      setHealth(health, false);
    },
  };
}
