import { runOnce } from "./run-once";
import { loadConfig } from "../config/config";
import { createDataSource, refuseUnsafeSqlMode } from "../storage/data-source";
import { MigrationError, runMigrations } from "../storage/migrations-runner";
import { countUncountedChecklists } from "../storage/checklist-backfill";
import { storedChecklistOf } from "../plans/writes/checklist-count";
import { ChecklistThread } from "../threads/checklist-thread";
import { DatabaseNodes } from "../storage/database-nodes";
import { loginOf } from "../storage/node-probe";

/**
 * `node dist/src/bin/migrate.js` (`npm run migrate`, the Helm chart's pre-install/pre-upgrade Job):
 * applies pending migrations to PLAN_DATABASE_URL (a Galera cluster's node list: through the first
 * node that can take writes), counts the checklist of every plan that has none
 * counted (storage/checklist-backfill.ts), then exits 0. Any failure (configuration, an
 * unreachable database, the migration lock not obtained in time, a failing migration) exits 1 with
 * one line on stderr naming the cause.
 */
async function migrate(): Promise<void> {
  const config = loadConfig(process.env);
  // A Galera cluster: the first of its nodes that can take writes (database-nodes.ts).
  const nodes =
    config.databaseNodes.length > 1
      ? new DatabaseNodes(config.databaseNodes, loginOf(config.databaseUrl), { onMove: () => undefined })
      : null;
  await nodes?.check().catch((error: unknown) => {
    throw new MigrationError(
      `database unreachable: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const dataSource = createDataSource(config.databaseUrl, { poolSize: 1, stream: nodes?.stream });
  await dataSource.initialize().catch((error: unknown) => {
    throw new MigrationError(
      `database unreachable: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const checklist = new ChecklistThread();
  try {
    await refuseUnsafeSqlMode(dataSource);
    const { applied } = await runMigrations(dataSource, { lockWaitMs: config.migrationLockWaitMs });
    process.stdout.write(
      applied.length > 0
        ? `migrations applied: ${applied.join(", ")}\n`
        : "schema is current: nothing to apply\n",
    );
    const { counted } = await countUncountedChecklists(dataSource, (text) =>
      storedChecklistOf(text, checklist),
    );
    if (counted > 0) process.stdout.write(`checklist progress counted: ${counted} plans\n`);
  } finally {
    await checklist.close();
    await dataSource.destroy();
  }
}

runOnce("migration", migrate);
