import type { DataSource } from "typeorm";
import { poolStats } from "../../../src/storage/pool-stats";

// poolStats reads mysql2's pool internals (lib/base/pool.js): what it makes of a pool as mysql2
// builds it, and of one whose fields are not all there (no figures, never a throw).
const queue = (length: number) => ({ length });
const mysqlWith = (pool: unknown) =>
  ({ options: { type: "mysql" }, driver: { pool } }) as unknown as DataSource;
const pool = (all: number, free: number, queued: number, limit = 10) => ({
  _allConnections: queue(all),
  _freeConnections: queue(free),
  _connectionQueue: queue(queued),
  config: { connectionLimit: limit },
});

describe("poolStats", () => {
  it("counts the connections handed out, the idle ones, the queued requests and the limit", () => {
    expect(poolStats(mysqlWith(pool(7, 3, 0)))).toEqual({ inUse: 4, idle: 3, waiting: 0, limit: 10 });
    expect(poolStats(mysqlWith(pool(10, 0, 5)))).toEqual({ inUse: 10, idle: 0, waiting: 5, limit: 10 });
    expect(poolStats(mysqlWith(pool(0, 0, 0, 2)))).toEqual({ inUse: 0, idle: 0, waiting: 0, limit: 2 });
  });

  it("has no figures for SQLite, nor for a MySQL data source without a pool (not initialized, destroyed)", () => {
    const sqlite = { options: { type: "better-sqlite3" }, driver: {} } as unknown as DataSource;
    expect(poolStats(sqlite)).toBeNull();
    expect(poolStats(mysqlWith(undefined))).toBeNull();
    expect(poolStats(mysqlWith(null))).toBeNull();
  });

  it("has no figures when a field it reads is missing or is not a count (a mysql2 that renamed its internals)", () => {
    const broken: Record<string, unknown>[] = [
      { ...pool(1, 1, 0), _allConnections: undefined },
      { ...pool(1, 1, 0), _freeConnections: {} },
      { ...pool(1, 1, 0), _connectionQueue: queue(-1) },
      { ...pool(1, 1, 0), config: undefined },
      { ...pool(1, 1, 0), config: { connectionLimit: "10" } },
      { ...pool(1, 1, 0), _allConnections: queue(1.5) },
    ];
    for (const fields of broken) expect(poolStats(mysqlWith(fields))).toBeNull();
  });
});
