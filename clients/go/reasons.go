package taskplans

import "google.golang.org/grpc/codes"

// The helpers below group errors by what the caller does next (clients/SDK.md, "Typed errors").
// Each takes any error and is false for nil and for anything that is not such an error.

func reasonIn(err error, reasons ...string) bool {
	e := FromError(err)
	if e == nil || e.Reason == "" {
		return false
	}
	for _, reason := range reasons {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

func codeIs(err error, c codes.Code) bool {
	e := FromError(err)
	return e != nil && e.Code == c
}

// IsVersionMismatch: VERSION_MISMATCH or REVISION_CHANGED. Read again, then decide again.
func IsVersionMismatch(err error) bool { return reasonIn(err, "VERSION_MISMATCH", "REVISION_CHANGED") }

// IsNotFound: PLAN_NOT_FOUND, TASK_NOT_FOUND or REVISION_NOT_FOUND.
func IsNotFound(err error) bool {
	return reasonIn(err, "PLAN_NOT_FOUND", "TASK_NOT_FOUND", "REVISION_NOT_FOUND")
}

// IsAlreadyExists: TASK_EXISTS or PLAN_EXISTS.
func IsAlreadyExists(err error) bool { return reasonIn(err, "TASK_EXISTS", "PLAN_EXISTS") }

// IsAuthError: code UNAUTHENTICATED (any reason, a failing token provider included), or
// TASK_NOT_REACHABLE.
func IsAuthError(err error) bool {
	return codeIs(err, codes.Unauthenticated) || reasonIn(err, "TASK_NOT_REACHABLE")
}

// IsInvalidArgument: code INVALID_ARGUMENT.
func IsInvalidArgument(err error) bool { return codeIs(err, codes.InvalidArgument) }

// IsPreconditionFailed: code FAILED_PRECONDITION (the content rules: reduction, size, edit text).
func IsPreconditionFailed(err error) bool { return codeIs(err, codes.FailedPrecondition) }

// IsRateLimited: RATE_LIMITED, WRITE_BUDGET_EXCEEDED or HISTORY_QUOTA_EXCEEDED.
func IsRateLimited(err error) bool {
	return reasonIn(err, "RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "HISTORY_QUOTA_EXCEEDED")
}

// IsRetriable: what the retry policy retries, whatever the method: UNAVAILABLE (any reason or
// none), RESOURCE_EXHAUSTED RATE_LIMITED, WRITE_BUDGET_EXCEEDED or EXPENSIVE_CALLS_LIMITED (all with RetryInfo) and
// ABORTED WRITE_CONFLICT.
func IsRetriable(err error) bool {
	e := FromError(err)
	if e == nil {
		return false
	}
	switch e.Code {
	case codes.Unavailable:
		return true
	case codes.ResourceExhausted:
		return e.Reason == "RATE_LIMITED" || e.Reason == "WRITE_BUDGET_EXCEEDED" || e.Reason == "EXPENSIVE_CALLS_LIMITED"
	case codes.Aborted:
		return e.Reason == "WRITE_CONFLICT"
	default:
		return false
	}
}

// IsWatchHistoryExpired: WATCH_HISTORY_EXPIRED. Read the plan again and watch after its version.
func IsWatchHistoryExpired(err error) bool { return reasonIn(err, "WATCH_HISTORY_EXPIRED") }

// IsWatchTooSlow: WATCH_TOO_SLOW. Metadata["resume_after_version"] says where to resume.
func IsWatchTooSlow(err error) bool { return reasonIn(err, "WATCH_TOO_SLOW") }

// IsHistoryUnavailable: HISTORY_UNAVAILABLE. The content at the version given (GetPlanChanges'
// since_version, a merge's expected_version) can no longer be derived: read the whole plan
// (HistoryUnavailableOf has the versions).
func IsHistoryUnavailable(err error) bool { return reasonIn(err, "HISTORY_UNAVAILABLE") }

// IsMergeConflict: MERGE_CONFLICT. A merge found your change and others' at the same lines and
// wrote nothing: read the changes since your version, redo your change, retry with the current
// version (MergeConflictOf has the regions).
func IsMergeConflict(err error) bool { return reasonIn(err, "MERGE_CONFLICT") }
