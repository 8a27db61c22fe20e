import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { WRITE_KINDS, type WriteMetrics } from "../plans/ports/write-metrics";

/** The door a call came through: the gRPC port, or the HTTP listener's Connect or gRPC-Web protocol. */
export type CallProtocol = "grpc" | "connect" | "grpc-web";

/**
 * What the service measures: the write pipeline's port (plans/ports/write-metrics) and what the edge
 * and the background report. Labels are bounded sets (method, code, reason, outcome); never plan
 * content, titles or task ids.
 */
export interface PlanMetrics extends WriteMetrics {
  /** A call ended; `protocol` is the door it came through: grpc, connect or grpc-web (the HTTP listener). */
  rpc(method: string, code: string, seconds: number, protocol: CallProtocol): void;
  rejection(reason: string): void;
  /** Change rows the background pruner deleted. */
  changesPruned(rows: number): void;
  /** A pruning pass ended: complete, or with work left for the next (its bounds, or a failure). */
  changesPrunePass(complete: boolean): void;
  /** A change committed while its WatchPlan stream was open was handed to the stream this long after its commit. */
  watchDelivered(seconds: number): void;
}

const GAUGES_NAMED_AS_COUNTERS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/** Prometheus metrics in their own registry (plus Node.js process defaults). */
export function createMetrics(): { metrics: PlanMetrics; registry: Registry } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client names three gauges with a counter's suffix (the sums of nodejs_active_handles,
  // _requests and _resources, which stay by type): Prometheus's linter (`promtool check metrics`,
  // promtool-metrics.test.ts) refuses them, and the by-type series say the same.
  for (const name of GAUGES_NAMED_AS_COUNTERS) registry.removeSingleMetric(name);
  const seconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const rpcs = new Histogram({
    name: "taskplans_rpc_duration_seconds",
    help: "Calls by method, status code and protocol (grpc, or connect and grpc-web on the HTTP listener)",
    labelNames: ["method", "code", "protocol"],
    buckets: seconds,
    registers: [registry],
  });
  const lockWaits = new Histogram({
    name: "taskplans_lock_wait_seconds",
    help: "Time a write waited for its task's lock",
    labelNames: ["obtained"],
    buckets: seconds,
    registers: [registry],
  });
  const lockFailures = new Counter({
    name: "taskplans_lock_failures_total",
    help: "Writes that did not obtain their task's lock in time",
    registers: [registry],
  });
  const transactions = new Histogram({
    name: "taskplans_transaction_duration_seconds",
    help: "Write transactions by outcome",
    labelNames: ["outcome"],
    buckets: seconds,
    registers: [registry],
  });
  const sizes = new Histogram({
    name: "taskplans_plan_size_bytes",
    help: "Size of plans as written",
    buckets: [256, 1024, 4096, 16_384, 65_536, 131_072, 196_608, 262_144],
    registers: [registry],
  });
  const revisions = new Counter({
    name: "taskplans_revisions_total",
    help: "Revisions written, new or coalesced into the newest one",
    labelNames: ["kind"],
    registers: [registry],
  });
  const rejections = new Counter({
    name: "taskplans_rejections_total",
    help: "Calls rejected, by ErrorInfo reason",
    labelNames: ["reason"],
    registers: [registry],
  });
  const stored = new Counter({
    name: "taskplans_stored_bytes_total",
    help: "Bytes of plan text committed writes stored (revisions and change history, before trimming)",
    registers: [registry],
  });
  const writes = new Counter({
    name: "taskplans_writes_total",
    help: "Writes that passed their checks before the lock, by use case (mode) and how they ended (committed, unchanged, failed)",
    labelNames: ["mode", "outcome"],
    registers: [registry],
  });
  // Every pair from the start (at 0): a fixed set, so the dashboard finds each mode's series.
  for (const mode of WRITE_KINDS)
    for (const outcome of ["committed", "unchanged", "failed"]) writes.inc({ mode, outcome }, 0);
  const pruned = new Counter({
    name: "taskplans_changes_pruned_total",
    help: "Change history rows deleted by the background pruner",
    registers: [registry],
  });
  const deliveries = new Histogram({
    name: "taskplans_watch_delivery_seconds",
    help: "Time from a change's commit to its hand-off to a WatchPlan stream that was open when it committed (replays excluded)",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // Set at start and by every pruning statement (even one that deleted nothing): a pruner that
  // stopped, or whose statements keep failing, leaves it behind (alert TaskplansChangePruneStalled).
  const lastPrune = new Gauge({
    name: "taskplans_changes_prune_last_statement_timestamp_seconds",
    help: "When the background pruner last ran a statement (or the process started), in seconds since the epoch",
    registers: [registry],
  });
  lastPrune.setToCurrentTime();
  // Passes in a row that left work for the next: a backlog being worked off counts up for a while,
  // one that grows faster than the bounded passes delete keeps counting (alert
  // TaskplansChangePruneFallingBehind). A complete pass sets it back to 0.
  const incompletePasses = new Gauge({
    name: "taskplans_changes_prune_incomplete_passes",
    help: "Pruning passes in a row that ended with work left (at their bounds, or failed); 0 after a complete pass",
    registers: [registry],
  });
  return {
    registry,
    metrics: {
      rpc: (method, code, s, protocol) => rpcs.observe({ method, code, protocol }, s),
      lockWait: (s, obtained) => {
        lockWaits.observe({ obtained: String(obtained) }, s);
        if (!obtained) lockFailures.inc();
      },
      transaction: (s, outcome) => transactions.observe({ outcome }, s),
      planSize: (bytes) => sizes.observe(bytes),
      revision: (coalesced) => revisions.inc({ kind: coalesced ? "coalesced" : "new" }),
      rejection: (reason) => rejections.inc({ reason }),
      storedBytes: (bytes) => stored.inc(bytes),
      write: (mode, outcome) => writes.inc({ mode, outcome }),
      watchDelivered: (s) => deliveries.observe(s),
      changesPruned: (rows) => {
        pruned.inc(rows);
        lastPrune.setToCurrentTime();
      },
      changesPrunePass: (complete) => (complete ? incompletePasses.set(0) : incompletePasses.inc()),
    },
  };
}

/** What the WatchPlan gauges read when scraped. */
export interface WatchFigures {
  streams(): number;
  queuedBytes(): number;
  writingBytes(): number;
  readingBytes(): number;
}

/**
 * Gauges of this replica's WatchPlan streams: how many, and the bytes held for their clients
 * (queued behind the message being written, being written, and kept for a message being read;
 * grpc/watch/watch-buffers.ts).
 */
export function watchGauges(registry: Registry, figures: WatchFigures): void {
  new Gauge({
    name: "taskplans_watch_streams",
    help: "WatchPlan streams open on this replica",
    registers: [registry],
    collect() {
      this.set(figures.streams());
    },
  });
  new Gauge({
    name: "taskplans_watch_buffer_bytes",
    help: "Bytes held for WatchPlan clients, all states together bounded by PLAN_WATCH_BUFFER_BYTES: queued, being written, or kept for a message being read",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      this.set({ state: "queued" }, figures.queuedBytes());
      this.set({ state: "writing" }, figures.writingBytes());
      this.set({ state: "reading" }, figures.readingBytes());
    },
  });
}

/**
 * `taskplans_expensive_calls_in_flight`: the calls holding a slot of the expensive-call limit
 * (src/grpc/limits/expensive-calls.ts) now, read at each scrape.
 */
export function expensiveCallsGauge(registry: Registry, inFlight: () => number): void {
  new Gauge({
    name: "taskplans_expensive_calls_in_flight",
    help: "Expensive calls (diffs, GetPlanChanges, merging writes) running on this replica (bounded by PLAN_EXPENSIVE_CALLS_PER_REPLICA)",
    registers: [registry],
    collect() {
      this.set(inFlight());
    },
  });
}

/**
 * `taskplans_db_connections_replaced_total{reason}`: pooled database connections a write did not
 * keep, because they were found closed (`closed`) or their first statement found them gone (`lost`).
 * Returns what counts one.
 */
export function connectionReplacements(registry: Registry): (reason: "closed" | "lost") => void {
  const replaced = new Counter({
    name: "taskplans_db_connections_replaced_total",
    help: "Pooled database connections replaced before a write used them (closed by the server or the network while idle)",
    labelNames: ["reason"],
    registers: [registry],
  });
  for (const reason of ["closed", "lost"]) replaced.inc({ reason }, 0);
  return (reason) => replaced.inc({ reason });
}

/** The connections of the database pool, as the pool gauges export them. */
export interface PoolFigures {
  readonly inUse: number;
  readonly idle: number;
  readonly waiting: number;
  readonly limit: number;
}

/** What the database gauges read when scraped; null: no figures this time (the last ones stay). */
export interface DatabaseFigures {
  /** The connection pool (MySQL). */
  readonly pool?: (() => PoolFigures | null) | null;
  /** The bytes of the write-ahead log file (the embedded SQLite database). */
  readonly walBytes?: (() => number | null) | null;
}

/**
 * Gauges of the database, read at scrape time. The pool's, registered only if the pool answers
 * when they are (MySQL, and a driver whose pool can be read; otherwise no series): connections by
 * state (`in_use`, `idle`), requests queued for a connection (alert TaskplansDatabasePoolExhausted)
 * and the pool's limit. The embedded database's: the size of its `-wal` file (alert
 * TaskplansEmbeddedWalGrowing).
 */
export function databaseGauges(registry: Registry, figures: DatabaseFigures): void {
  const { pool, walBytes } = figures;
  if (pool && pool() !== null) {
    new Gauge({
      name: "taskplans_db_pool_connections",
      help: "Connections of the database pool: in_use (handed out, or being opened) and idle",
      labelNames: ["state"],
      registers: [registry],
      collect() {
        const now = pool();
        if (now === null) return;
        this.set({ state: "in_use" }, now.inUse);
        this.set({ state: "idle" }, now.idle);
      },
    });
    new Gauge({
      name: "taskplans_db_pool_waiting_requests",
      help: "Requests for a database connection queued because the pool has opened as many as it may",
      registers: [registry],
      collect() {
        const now = pool();
        if (now !== null) this.set(now.waiting);
      },
    });
    new Gauge({
      name: "taskplans_db_pool_max_connections",
      help: "The most connections the database pool opens (PLAN_DATABASE_POOL_SIZE)",
      registers: [registry],
      collect() {
        const now = pool();
        if (now !== null) this.set(now.limit);
      },
    });
  }
  if (walBytes)
    new Gauge({
      name: "taskplans_sqlite_wal_bytes",
      help: "Size of the embedded database's write-ahead log file (<file>-wal): the most the log held since the file was created",
      registers: [registry],
      collect() {
        const bytes = walBytes();
        if (bytes !== null) this.set(bytes);
      },
    });
}

/** Counters of what the service depends on at its edge: the identity provider's keys, its certificates. */
export interface EdgeCounters {
  /** A JWK Set fetch ended (`ok`, or `failed`: the cached keys stay in use). */
  jwksFetch(outcome: "ok" | "failed"): void;
  /** Changed TLS files were served (`reloaded`) or refused (`unusable`, `expired`, `not_yet_valid`). */
  tlsReload(outcome: string): void;
}

export function edgeCounters(registry: Registry): EdgeCounters {
  const jwksFetches = new Counter({
    name: "taskplans_jwks_fetches_total",
    help: "Fetches of the identity provider's JWK Set, by outcome (ok, failed)",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const tlsReloads = new Counter({
    name: "taskplans_tls_reloads_total",
    help: "Changed TLS files served (reloaded) or refused, the pair in use staying (unusable, expired, not_yet_valid)",
    labelNames: ["outcome"],
    registers: [registry],
  });
  // Every outcome is exported from the start (at 0), so the dashboard and the alert rules find the
  // series on a replica that never fetched keys or reloaded certificates.
  for (const outcome of ["ok", "failed"]) jwksFetches.inc({ outcome }, 0);
  for (const outcome of ["reloaded", "unusable", "expired", "not_yet_valid"]) tlsReloads.inc({ outcome }, 0);
  return {
    jwksFetch: (outcome) => jwksFetches.inc({ outcome }),
    tlsReload: (outcome) => tlsReloads.inc({ outcome }),
  };
}

/**
 * The Galera node a replica talks to (`taskplans_db_node_current`, 1 for the current node of those
 * PLAN_DATABASE_URL names, 0 for the others) and its moves (`taskplans_db_node_moves_total`, by the
 * node it left, the one it moved to, and why: storage/node-verdict.ts). Returns what a move calls.
 */
export function databaseNodeMetrics(
  registry: Registry,
  nodes: readonly string[],
  reasons: readonly string[],
): (from: string, to: string, reason: string) => void {
  const current = new Gauge({
    name: "taskplans_db_node_current",
    help: "1 for the database node (of PLAN_DATABASE_URL's list) this replica talks to now, 0 for the others",
    labelNames: ["node"],
    registers: [registry],
  });
  const moves = new Counter({
    name: "taskplans_db_node_moves_total",
    help: "Moves of this replica from one database node to another, by the node left, the node taken and why",
    labelNames: ["from", "to", "reason"],
    registers: [registry],
  });
  for (const [i, node] of nodes.entries()) current.set({ node }, i === 0 ? 1 : 0);
  for (const reason of reasons) moves.inc({ from: nodes[0] ?? "", to: nodes[1] ?? "", reason }, 0);
  return (from, to, reason) => {
    current.set({ node: from }, 0);
    current.set({ node: to }, 1);
    moves.inc({ from, to, reason });
  };
}
