import { format } from "node:util";
import { setLogger } from "@grpc/grpc-js";
import type { Logger } from "pino";

/**
 * Sends grpc-js's own log lines (by default "E ..." text on stderr) through the service's logger,
 * as structured JSON like every other log line. Process-wide (grpc-js has one logger), so only an
 * entry point calls it: stderr then carries only what the entry point itself reports, such as the
 * one line of a start-up failure.
 */
export function routeGrpcLogs(logger: Logger): void {
  const grpc = logger.child({ source: "grpc-js" });
  setLogger({
    error: (...args: unknown[]) => grpc.error(format(...args)),
    info: (...args: unknown[]) => grpc.info(format(...args)),
    debug: (...args: unknown[]) => grpc.debug(format(...args)),
  });
}
