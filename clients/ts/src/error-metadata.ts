import { errorInfoOf } from "./errors";

/** What a MERGE_CONFLICT carries (ErrorInfo.metadata, typed). */
export interface MergeConflict {
  /** The version the write was based on (its expected_version). */
  readonly baseVersion: number;
  /** The plan's version when the merge was tried: retry with it once you redid your change. */
  readonly currentVersion: number;
  /** How many regions conflict. */
  readonly conflictRegions: number;
  /**
   * The conflicting regions in diff3's marker format ("@@ base lines A-B @@", "<<<<<<< yours",
   * "||||||| base", "=======", ">>>>>>> current"), at most 4,096 UTF-8 bytes.
   */
  readonly conflicts: string;
}

/** What a HISTORY_UNAVAILABLE carries (ErrorInfo.metadata, typed). */
export interface HistoryUnavailable {
  /** The version whose content cannot be derived: GetPlanChanges' since_version, a merge's expected_version. */
  readonly version: number;
  /** The plan's current version: read the whole plan and use it. */
  readonly currentVersion: number;
  /** The oldest version GetPlanChanges can answer from now; null when only the current one. */
  readonly oldestVersion: number | null;
}

const numberOr = (value: string | undefined, fallback: number): number =>
  value === undefined || value === "" || !Number.isFinite(Number(value)) ? fallback : Number(value);

/** The metadata of a MERGE_CONFLICT error, typed; null for any other error. */
export function mergeConflictOf(error: unknown): MergeConflict | null {
  const info = errorInfoOf(error);
  if (info?.reason !== "MERGE_CONFLICT") return null;
  const m = info.metadata;
  return {
    baseVersion: numberOr(m.base_version, 0),
    currentVersion: numberOr(m.current_version, 0),
    conflictRegions: numberOr(m.conflict_regions, 0),
    conflicts: m.conflicts ?? "",
  };
}

/** The metadata of a HISTORY_UNAVAILABLE error, typed; null for any other error. */
export function historyUnavailableOf(error: unknown): HistoryUnavailable | null {
  const info = errorInfoOf(error);
  if (info?.reason !== "HISTORY_UNAVAILABLE") return null;
  const m = info.metadata;
  return {
    version: numberOr(m.since_version ?? m.expected_version, 0),
    currentVersion: numberOr(m.current_version, 0),
    oldestVersion: m.oldest_version === undefined ? null : numberOr(m.oldest_version, 0),
  };
}
