/**
 * What kind of write a command is, as the metrics label it (`mode`): a fixed set, one per use case
 * (an UpdatePlan is a replace or an append, a CreatePlan a create whatever its version).
 */
export const WRITE_KINDS = [
  "create",
  "replace",
  "append",
  "edit",
  "save",
  "restore",
  "revert",
  "delete",
  "delete_task",
  "mark",
  "import",
] as const;
/** One of WRITE_KINDS. */
export type WriteKind = (typeof WRITE_KINDS)[number];

/**
 * How a write that reached the pipeline's lock ended: it changed the plan (`committed`), had
 * nothing to change (a remembered retry, a restore of the current plan, a second mark), or
 * `failed` (refused by a rule under the lock, a lost fence, the lock or the database unavailable:
 * nothing written).
 */
export type WriteOutcome = "committed" | "unchanged" | "failed";

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
  /** A write that passed its checks before the lock ended (those refused before are rejections only). */
  write(kind: WriteKind, outcome: WriteOutcome): void;
}
