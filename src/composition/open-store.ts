import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { Config } from "../config/config";
import { connectionReplacements, databaseGauges, databaseNodeMetrics } from "../observability/metrics";
import { DatabaseNodes, nodeLabel } from "../storage/database-nodes";
import { loginOf } from "../storage/node-probe";
import { servesGalera, waitForCausality } from "../storage/causal-reads";
import { MOVE_REASONS } from "../storage/node-verdict";
import { createDataSource, dialectOf, refuseUnsafeSqlMode } from "../storage/data-source";
import type { Dialect } from "../storage/sql-dialect";
import { runMigrations } from "../storage/migrations-runner";
import { countUncountedChecklists } from "../storage/checklist-backfill";
import type { ChecklistCounter } from "../plans/ports/checklist-counter";
import { storedChecklistOf } from "../plans/writes/checklist-count";
import { poolStats } from "../storage/pool-stats";
import { DEFAULT_WRITE_CONNECTIONS } from "../storage/transaction";
import { TypeOrmPlanStore } from "../storage/typeorm-plan-store";
import { DEFAULT_CHECKPOINT_SETTINGS } from "../storage/wal-checkpointer";
import { walFileBytes } from "../storage/wal-file-bytes";

/**
 * The start's database step: the connection (refused in an unsafe SQL mode), the migrations when
 * PLAN_MIGRATE_ON_START says so (then, as `migrate` does, the checklist of every plan without one
 * counted by `checklist`), the pool and log-file gauges read at scrape time, and the store.
 */
export async function openStore(
  config: Config,
  logger: Logger,
  registry: Registry,
  checklist: ChecklistCounter,
): Promise<{ readonly store: TypeOrmPlanStore; readonly dialect: Dialect; ping(): Promise<void> }> {
  const nodes = galeraNodes(config, logger, registry);
  const dataSource = createDataSource(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    stream: nodes?.stream,
  });
  // Several nodes: the first that can take writes, before the first connection.
  await nodes?.check();
  await dataSource.initialize();
  await refuseUnsafeSqlMode(dataSource);
  // Galera (a node list, or one address in front of a cluster): a read through one node sees what
  // was committed through another, and an aborted statement is never retried alone (causal-reads.ts).
  const galera = nodes !== null || (await servesGalera(dataSource));
  if (galera) await waitForCausality(dataSource);
  if (config.migrateOnStart) {
    await runMigrations(dataSource, { lockWaitMs: config.migrationLockWaitMs });
    const { counted } = await countUncountedChecklists(dataSource, (text) =>
      storedChecklistOf(text, checklist),
    );
    if (counted > 0) logger.info({ counted }, "checklist progress counted for plans written before it was");
  }
  const dialect = dialectOf(config.databaseUrl);
  // Read at scrape time: the MySQL pool's connections, the embedded database's log file.
  databaseGauges(registry, { pool: () => poolStats(dataSource), walBytes: walFileBytes(dataSource) });
  const store = new TypeOrmPlanStore(dataSource, dialect, {
    // A write's transaction outlives a holder that stopped acting by no more than its lease.
    writeConnections: {
      holdSeconds: config.redis ? config.redis.leaseMs / 1000 : DEFAULT_WRITE_CONNECTIONS.holdSeconds,
      onReplaced: connectionReplacements(registry),
    },
    revisionContentAtHead: config.revisionContentAtHead,
    causalReads: galera,
    walCheckpoints: {
      settings: DEFAULT_CHECKPOINT_SETTINGS,
      onFailure: (reason) =>
        logger.error({ reason }, "background WAL checkpoints stopped; commits checkpoint the log again"),
    },
  });
  return {
    store,
    dialect,
    // The health monitor's probe: on Galera, the current node is asked first (and left if it must be).
    async ping() {
      await nodes?.check();
      await store.ping();
    },
  };
}

/**
 * PLAN_DATABASE_URL naming several nodes (a Galera cluster): the replica's current node, its moves
 * logged and counted (taskplans_db_node_*). One node: null, the URL's host is used as it is.
 */
function galeraNodes(config: Config, logger: Logger, registry: Registry): DatabaseNodes | null {
  if (config.databaseNodes.length < 2) return null;
  const labels = config.databaseNodes.map(nodeLabel);
  const moved = databaseNodeMetrics(registry, labels, MOVE_REASONS);
  return new DatabaseNodes(config.databaseNodes, loginOf(config.databaseUrl), {
    onMove(from, to, reason) {
      moved(nodeLabel(from), nodeLabel(to), reason);
      logger.warn({ from: nodeLabel(from), to: nodeLabel(to), reason }, "database node left for another");
    },
  });
}
