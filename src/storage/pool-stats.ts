import type { DataSource } from "typeorm";

/** The connections of the database pool as counted when read (the metrics' pool gauges). */
export interface PoolStats {
  /** Connections handed out (to a write's transaction or a read's query), or being opened for one. */
  readonly inUse: number;
  /** Open connections waiting in the pool to be taken. */
  readonly idle: number;
  /** Requests for a connection queued because the pool has opened as many as it may. */
  readonly waiting: number;
  /** The most connections the pool opens (PLAN_DATABASE_POOL_SIZE). */
  readonly limit: number;
}

// What is read of mysql2's pool (lib/base/pool.js): its three queues and its configured limit.
// These are internals, not API: each one is checked, so a mysql2 that renames them reads as no
// figures (no series) instead of a failed scrape.
interface Mysql2PoolInternals {
  readonly _allConnections?: { readonly length?: unknown };
  readonly _freeConnections?: { readonly length?: unknown };
  readonly _connectionQueue?: { readonly length?: unknown };
  readonly config?: { readonly connectionLimit?: unknown };
}

const count = (value: unknown): number | null =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;

/**
 * The figures of the mysql2 pool TypeORM's MysqlDriver holds, the one reads and write
 * transactions both take their connections from (transaction.ts takes them with
 * `obtainMasterConnection()`). Read-only, and cheap enough for every scrape (three lengths). Null
 * when there is no such pool (SQLite; a MySQL data source not initialized or already destroyed) or
 * when one of the fields it reads is not there.
 */
export function poolStats(dataSource: DataSource): PoolStats | null {
  if (dataSource.options.type !== "mysql") return null;
  const pool = (dataSource.driver as unknown as { pool?: Mysql2PoolInternals | null }).pool;
  if (pool === undefined || pool === null) return null;
  const all = count(pool._allConnections?.length);
  const idle = count(pool._freeConnections?.length);
  const waiting = count(pool._connectionQueue?.length);
  const limit = count(pool.config?.connectionLimit);
  if (all === null || idle === null || waiting === null || limit === null) return null;
  return { inUse: Math.max(0, all - idle), idle, waiting, limit };
}
