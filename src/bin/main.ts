import { startApp } from "../app";
import { loadConfig } from "../config/config";
import { ConfigError, ListenError } from "@taskplans/tls";
import { routeGrpcLogs } from "../grpc/grpc-logs";
import { UnsafeSqlModeError } from "../storage/data-source";
import { createLogger } from "../logger";

/** Entry point: config from the environment, serve, drain on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel, undefined, { traceIds: config.tracing !== null });
  routeGrpcLogs(logger);
  const app = await startApp(config, { logger });
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    process.stderr.write(`${signal} received, draining\n`);
    app.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

// Failures an operator fixes in the configuration are one line naming the setting; anything else
// keeps its stack.
main().catch((error: unknown) => {
  const known =
    error instanceof ConfigError || error instanceof ListenError || error instanceof UnsafeSqlModeError;
  process.stderr.write(`${known ? error.message : String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
