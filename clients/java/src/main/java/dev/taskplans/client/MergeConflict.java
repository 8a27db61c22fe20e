package dev.taskplans.client;

/**
 * What a {@code MERGE_CONFLICT} carries ({@code ErrorInfo.metadata}, typed): see {@link
 * TaskPlansException#mergeConflict()}.
 *
 * @param baseVersion the version the write was based on (its {@code expected_version})
 * @param currentVersion the plan's version when the merge was tried: retry with it once you redid
 *     your change
 * @param conflictRegions how many regions conflict
 * @param conflicts the conflicting regions in diff3's marker format ({@code @@ base lines A-B @@},
 *     {@code <<<<<<< yours}, {@code ||||||| base}, {@code =======}, {@code >>>>>>> current}), at most
 *     4,096 UTF-8 bytes
 */
public record MergeConflict(long baseVersion, long currentVersion, int conflictRegions, String conflicts) {}
