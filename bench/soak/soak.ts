/**
 * Soak (not a benchmark of speed): the embedded default, `npm start`'s own entry point on a SQLite
 * file, and MariaDB with two replicas and three Redis nodes, each under a mixed load for a set time
 * with the change history's maintenance intervals shortened. Prints figures every interval and a
 * summary; exits 1 when a check fails (health slower than its bound, p99 or RSS trending upward, the
 * database outgrowing what retention allows, change rows not pruned, an acknowledged write missing,
 * a watch gap, an unexpected error). See bench/soak/README.md.
 *
 *   npm run soak
 *   SOAK_TOPOLOGY=embedded SOAK_DURATION_MS=60000 npm run soak
 */
import { runTopology } from "./run";
import { printSettings, printSummary } from "./report";
import { loadSoakSettings } from "./settings";
import { Cleanup } from "./topology";
import { checksOf } from "./verdict";
import type { TopologyResult } from "./types";

async function main(): Promise<number> {
  const settings = loadSoakSettings();
  printSettings(settings);
  let current: Cleanup | null = null;
  // Stopped by a signal or by the watchdog: stop exactly what this run started, then exit.
  const bail = (why: string, code: number) => {
    process.stdout.write(`soak: ${why}; stopping what it started\n`);
    void (current?.runAll() ?? Promise.resolve()).finally(() => process.exit(code));
  };
  process.once("SIGINT", () => bail("SIGINT", 130));
  process.once("SIGTERM", () => bail("SIGTERM", 143));
  const perTopologyMs = settings.durationMs + 5 * 60_000;
  const watchdog = setTimeout(
    () => bail(`watchdog: no result after ${perTopologyMs * settings.topologies.length} ms`, 1),
    perTopologyMs * settings.topologies.length,
  );
  watchdog.unref();

  const results: TopologyResult[] = [];
  for (const [index, name] of settings.topologies.entries()) {
    const cleanup = new Cleanup();
    current = cleanup;
    try {
      results.push(await runTopology(name, settings, index, cleanup));
    } catch (error) {
      process.stdout.write(
        `SOAK FAILED [${name}]: could not run: ${(error as Error).stack ?? String(error)}\n`,
      );
      await cleanup.runAll();
      return 1;
    }
    await cleanup.runAll();
  }
  clearTimeout(watchdog);
  const checks = results.map((result) => checksOf(result, settings));
  printSummary(results, checks, settings);
  const passed = checks.every((list) => list.every((check) => check.pass));
  process.stdout.write(passed ? "soak: PASS\n" : "soak: FAIL\n");
  return passed ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stdout.write(`SOAK FAILED: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
