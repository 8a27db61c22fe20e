import { loadConfig } from "./config/config";
import { createDataSource, runMigrations } from "./storage/data-source";

/** `npm run migrate`: applies pending migrations to PLAN_DATABASE_URL once, then exits. */
async function migrate(): Promise<void> {
  const config = loadConfig(process.env);
  const dataSource = createDataSource(config.databaseUrl, { poolSize: 1 });
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
    process.stdout.write("migrations applied\n");
  } finally {
    await dataSource.destroy();
  }
}

migrate().catch((error: unknown) => {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
