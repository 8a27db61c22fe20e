/**
 * What the write pipeline reports about each write it runs: the port it measures through, declared
 * here so the domain names no metrics library (observability/metrics implements it). Labels stay
 * bounded sets; never plan content, titles or task ids.
 */
export interface WriteMetrics {
  /** How long a write waited for its task's lock, and whether it obtained it. */
  lockWait(seconds: number, obtained: boolean): void;
  /** How long a write's transaction ran, and how it ended. */
  transaction(seconds: number, outcome: "committed" | "rolled_back"): void;
  /** The size of a plan as a write stored it. */
  planSize(bytes: number): void;
  /** A revision written: a new one, or coalesced into the newest one. */
  revision(coalesced: boolean): void;
  /** Bytes of plan text a committed write stored (what the write budget counts). */
  storedBytes(bytes: number): void;
}
