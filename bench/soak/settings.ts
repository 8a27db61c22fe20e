import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SoakSettings, TopologyName } from "./types";

function repoRoot(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "proto", "taskplans"))) return dir;
  }
  throw new Error("repository root not found");
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min)
    throw new Error(`${name} must be a number >= ${min}, got ${raw}`);
  return value;
}

/** Parses the SOAK_* environment; throws naming the variable on a bad value. */
export function loadSoakSettings(env: NodeJS.ProcessEnv = process.env): SoakSettings {
  const topology = env.SOAK_TOPOLOGY ?? "both";
  const topologies: TopologyName[] =
    topology === "both"
      ? ["embedded", "mariadb"]
      : topology === "embedded" || topology === "mariadb"
        ? [topology]
        : [];
  if (topologies.length === 0)
    throw new Error(`SOAK_TOPOLOGY must be embedded, mariadb or both, got ${topology}`);
  const durationMs = number(env, "SOAK_DURATION_MS", 600_000, 1_000);
  const inject = env.SOAK_INJECT ?? "none";
  if (inject !== "none" && inject !== "lost-write") throw new Error(`SOAK_INJECT must be none or lost-write`);
  const root = repoRoot();
  return Object.freeze({
    topologies,
    durationMs,
    // About 20 intervals per run (so a trend has thirds of several intervals), 5 to 30 s each.
    reportIntervalMs: number(
      env,
      "SOAK_REPORT_INTERVAL_MS",
      Math.min(30_000, Math.max(5_000, durationMs / 20)),
      500,
    ),
    warmupMs: number(env, "SOAK_WARMUP_MS", Math.min(60_000, durationMs / 5)),
    seed: number(env, "SOAK_SEED", Math.floor(Math.random() * 2 ** 31)),
    workers: number(env, "SOAK_WORKERS", 16, 1),
    ledgerTasks: number(env, "SOAK_LEDGER_TASKS", 24, 1),
    mixedTasks: number(env, "SOAK_MIXED_TASKS", 24, 1),
    contendedTasks: number(env, "SOAK_CONTENDED_TASKS", 3, 1),
    contendedWriters: number(env, "SOAK_CONTENDED_WRITERS", 4, 1),
    watchers: number(env, "SOAK_WATCHERS", 12),
    rotateBytes: number(env, "SOAK_ROTATE_BYTES", 48 * 1024, 4096),
    rotateRevisions: number(env, "SOAK_ROTATE_REVISIONS", 150, 2),
    retention: Object.freeze({
      pruneIntervalMs: number(env, "SOAK_PRUNE_INTERVAL_MS", 5_000, 100),
      maxAgeMs: number(env, "SOAK_CHANGES_MAX_AGE_MS", 15_000, 1),
      maxVersions: number(env, "SOAK_CHANGES_MAX_VERSIONS", 100, 1),
    }),
    healthBoundMs: number(env, "SOAK_HEALTH_BOUND_MS", 1_000),
    p99Factor: number(env, "SOAK_P99_FACTOR", 3),
    p99FloorMs: number(env, "SOAK_P99_FLOOR_MS", 50),
    rssFactor: number(env, "SOAK_RSS_FACTOR", 1.5),
    rssFloorMb: number(env, "SOAK_RSS_FLOOR_MB", 64),
    dbFactor: number(env, "SOAK_DB_FACTOR", 3),
    inject,
    serverMain: env.SOAK_SERVER_MAIN ?? join(root, "dist", "src", "bin", "main.js"),
    repoRoot: root,
    mariadbPort: env.SOAK_MARIADB_PORT ? number(env, "SOAK_MARIADB_PORT", 0, 1) : null,
  });
}

/** The PLAN_* variables every soak server gets on top of the inherited environment. */
export function serverEnv(settings: SoakSettings): Record<string, string> {
  const r = settings.retention;
  return {
    PLAN_CHANGES_PRUNE_INTERVAL_MS: String(r.pruneIntervalMs),
    PLAN_CHANGES_MAX_AGE_MS: String(r.maxAgeMs),
    PLAN_CHANGES_MAX_VERSIONS: String(r.maxVersions),
    // All load comes from this one process (one caller address): the per-caller limit would cap it.
    PLAN_RATE_LIMIT_WRITES: "0",
    PLAN_LOG_LEVEL: "warn",
  };
}
