import { startApp } from "./app";
import { ConfigError, loadConfig } from "./config/config";

/** Entry point: config from the environment, serve, drain on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const app = await startApp(config);
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

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : String((error as Error)?.stack ?? error)}\n`,
  );
  process.exit(1);
});
