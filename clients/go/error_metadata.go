package taskplans

import "strconv"

// MergeConflict is what a MERGE_CONFLICT carries (ErrorInfo.metadata, typed).
type MergeConflict struct {
	// BaseVersion is the version the write was based on (its expected_version).
	BaseVersion uint64
	// CurrentVersion is the plan's version when the merge was tried: retry with it once you redid
	// your change.
	CurrentVersion uint64
	// ConflictRegions is how many regions conflict.
	ConflictRegions int
	// Conflicts are the conflicting regions in diff3's marker format ("@@ base lines A-B @@",
	// "<<<<<<< yours", "||||||| base", "=======", ">>>>>>> current"), at most 4,096 UTF-8 bytes.
	Conflicts string
}

// HistoryUnavailable is what a HISTORY_UNAVAILABLE carries (ErrorInfo.metadata, typed).
type HistoryUnavailable struct {
	// Version is the version whose content cannot be derived: GetPlanChanges' since_version, or a
	// merge's expected_version.
	Version uint64
	// CurrentVersion is the plan's current version: read the whole plan and use it.
	CurrentVersion uint64
	// OldestVersion is the oldest version GetPlanChanges can answer from now, when HasOldestVersion.
	OldestVersion    uint64
	HasOldestVersion bool
}

func metadataUint(metadata map[string]string, key string) (uint64, bool) {
	value, present := metadata[key]
	if !present {
		return 0, false
	}
	n, err := strconv.ParseUint(value, 10, 64)
	return n, err == nil
}

// MergeConflictOf reads the metadata of a MERGE_CONFLICT; false for any other error.
func MergeConflictOf(err error) (MergeConflict, bool) {
	e := FromError(err)
	if e == nil || e.Reason != "MERGE_CONFLICT" {
		return MergeConflict{}, false
	}
	base, _ := metadataUint(e.Metadata, "base_version")
	current, _ := metadataUint(e.Metadata, "current_version")
	regions, _ := metadataUint(e.Metadata, "conflict_regions")
	return MergeConflict{BaseVersion: base, CurrentVersion: current, ConflictRegions: int(regions), Conflicts: e.Metadata["conflicts"]}, true
}

// HistoryUnavailableOf reads the metadata of a HISTORY_UNAVAILABLE; false for any other error.
func HistoryUnavailableOf(err error) (HistoryUnavailable, bool) {
	e := FromError(err)
	if e == nil || e.Reason != "HISTORY_UNAVAILABLE" {
		return HistoryUnavailable{}, false
	}
	version, ok := metadataUint(e.Metadata, "since_version")
	if !ok {
		version, _ = metadataUint(e.Metadata, "expected_version")
	}
	current, _ := metadataUint(e.Metadata, "current_version")
	oldest, hasOldest := metadataUint(e.Metadata, "oldest_version")
	return HistoryUnavailable{Version: version, CurrentVersion: current, OldestVersion: oldest, HasOldestVersion: hasOldest}, true
}
