import type { SoakCalls } from "./calls";
import type { DatabaseSample } from "./database";
import type { Findings } from "./findings";
import type { CallFigures } from "./latency";
import type { MetricsScrape } from "./probes";
import type { Random } from "./random";

// The soak's shared records in one place: its settings, what an operation is given, and what a run
// measured. It imports only types of leaf modules (none imports this file back through a loop), so
// the program has no circle (the import gate checks bench/ too).

/** Which deployment a soak runs: the embedded default, or MariaDB with two replicas and three Redis nodes. */
export type TopologyName = "embedded" | "mariadb";

/** Background pruning of the change history, as the servers are configured for the soak. */
export interface RetentionSettings {
  readonly pruneIntervalMs: number;
  readonly maxAgeMs: number;
  readonly maxVersions: number;
}

/** Every knob of a soak run, read once from SOAK_* variables (see bench/soak/README.md). */
export interface SoakSettings {
  readonly topologies: readonly TopologyName[];
  readonly durationMs: number;
  readonly reportIntervalMs: number;
  readonly warmupMs: number;
  readonly seed: number;
  /** Concurrent load loops (each runs one call at a time). */
  readonly workers: number;
  readonly ledgerTasks: number;
  readonly mixedTasks: number;
  readonly contendedTasks: number;
  /** Appends in flight at once on one contended task. */
  readonly contendedWriters: number;
  readonly watchers: number;
  /** A ledger or contended task is verified and deleted (and replaced) once its plan reaches this size. */
  readonly rotateBytes: number;
  /** A mixed task is verified and deleted (and replaced) once it has this many revisions. */
  readonly rotateRevisions: number;
  readonly retention: RetentionSettings;
  readonly healthBoundMs: number;
  readonly p99Factor: number;
  readonly p99FloorMs: number;
  readonly rssFactor: number;
  readonly rssFloorMb: number;
  readonly dbFactor: number;
  /** Fault injected into the soak's own bookkeeping, to show a check fails ("lost-write"). */
  readonly inject: "none" | "lost-write";
  /** The server entry point (`npm start` runs dist/src/bin/main.js from the repository root). */
  readonly serverMain: string;
  readonly repoRoot: string;
  /** An already running MariaDB to create the soak's database on (else the soak starts one). */
  readonly mariadbPort: number | null;
}

/** Everything an operation needs. */
export interface LoadContext {
  readonly calls: SoakCalls;
  readonly random: Random;
  readonly findings: Findings;
  readonly settings: SoakSettings;
  readonly now: () => number;
}

/** Figures of the load itself, for the summary. */
export interface LoadCounts {
  tasksCreated: number;
  tasksDeleted: number;
  verifiedTasks: number;
  ledgerFragments: number;
  contendedFragments: number;
  mixedWrites: number;
  verifiedReads: number;
}

/** One report interval's figures. */
export interface IntervalRecord {
  readonly atS: number;
  /** Started after the warm-up (counts for the trend rule). */
  readonly warm: boolean;
  readonly calls: ReadonlyMap<string, CallFigures>;
  readonly health: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly servers: readonly {
    readonly name: string;
    readonly rssMb: number;
    /** CPU used over the interval, in % of one core. */
    readonly cpuPct: number;
    readonly metrics: MetricsScrape | null;
  }[];
  /** CPU the soak process itself used over the interval, in % of one core. */
  readonly soakCpuPct: number;
  readonly db: DatabaseSample;
  readonly retainedBytes: number;
  readonly fileBound: number;
  readonly writes: number;
}

/** Everything a topology's soak measured and found. */
export interface TopologyResult {
  readonly name: TopologyName;
  readonly describe: readonly string[];
  readonly intervals: readonly IntervalRecord[];
  readonly overall: ReadonlyMap<string, CallFigures>;
  readonly findings: Findings;
  readonly counts: LoadCounts;
  readonly elapsedS: number;
  readonly healthMaxMs: number;
  /** Why the load stopped early (a health violation, a server exit), or null. */
  readonly stoppedEarly: string | null;
  readonly retention: {
    staleMax: number;
    /** Samples of a task holding more change rows than the count rule allows, and the first few. */
    overCount: number;
    overCountExamples: string[];
    fileViolations: string[];
    finalChangeRows: number | null;
    idleWaitS: number;
  };
  readonly writesPerPrune: {
    readonly median: number;
    readonly max: number;
    readonly overBatch: number;
    readonly windows: number;
  };
  readonly watchers: { count: number; received: number; resumes: number; expired: number; behind: string[] };
  /** Writes retried after ABORTED WRITE_CONFLICT, by call. */
  readonly conflicts: ReadonlyMap<string, number>;
}
