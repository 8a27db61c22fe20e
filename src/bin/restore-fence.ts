import { runOnce } from "./run-once";
import { existsSync } from "node:fs";
import { loadConfig } from "../config/config";
import { createDataSource, dialectOf, refuseUnsafeSqlMode } from "../storage/data-source";
import {
  DEFAULT_VERSION_MARGIN,
  fenceRestoredVersions,
  RestoreFenceError,
} from "../storage/restored-versions";

const USAGE = "usage: restore-fence.js [--version-margin N]";

// `--version-margin N` (or `=N`): a whole number from 1 up; the default when absent.
function marginOf(args: readonly string[]): number {
  const [flag, value, ...rest] =
    args.length === 1 && args[0]?.startsWith("--version-margin=")
      ? ["--version-margin", args[0].slice("--version-margin=".length)]
      : args;
  if (flag === undefined) return DEFAULT_VERSION_MARGIN;
  if (flag !== "--version-margin" || value === undefined || rest.length > 0)
    throw new RestoreFenceError(USAGE);
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new RestoreFenceError(`--version-margin must be a whole number from 1 up, got "${value}"`);
  return Number(value);
}

/**
 * `node dist/src/bin/restore-fence.js [--version-margin N]`: run once on a restored database
 * (PLAN_DATABASE_URL), with the service stopped (on MySQL/MariaDB it refuses while another connection
 * uses the database), before the service serves it. Moves every plan's
 * version up by N (default 1,000,000; it must exceed the writes any one task may have had between the
 * backup and the loss) and drops the change history, so that no version of the lost timeline is
 * given again and every resume point or expected version from it is refused
 * (storage/restored-versions.ts). Prints one JSON line (margin, tasks, changeRows, batches,
 * milliseconds) and exits 0; any failure exits 1 with one line on stderr naming the cause.
 */
async function restoreFence(): Promise<void> {
  const margin = marginOf(process.argv.slice(2));
  const config = loadConfig(process.env);
  const file = config.databaseUrl.startsWith("sqlite:") ? config.databaseUrl.slice("sqlite:".length) : null;
  // Opening a missing file would create an empty database: the restored one is not where it says.
  if (file !== null && (file === ":memory:" || !existsSync(file)))
    throw new RestoreFenceError(`PLAN_DATABASE_URL: no database file at ${file}`);
  const dataSource = createDataSource(config.databaseUrl, { poolSize: 1 });
  await dataSource.initialize().catch((error: unknown) => {
    throw new RestoreFenceError(
      `database unreachable: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  try {
    await refuseUnsafeSqlMode(dataSource);
    const result = await fenceRestoredVersions(dataSource, dialectOf(config.databaseUrl), margin);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await dataSource.destroy();
  }
}

runOnce("restore fence", restoreFence);
