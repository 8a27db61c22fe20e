package taskplans_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestTheTypedErrorCarriesEveryDetail(t *testing.T) {
	metadata := map[string]string{"next_action": "Correct task_id and retry.", "field": "task_id", "request_id": "r-1"}
	st, _ := status.New(codes.InvalidArgument, "Field task_id is required.").WithDetails(
		&errdetails.ErrorInfo{Reason: "INVALID_FIELD", Domain: taskplans.ErrorDomain, Metadata: metadata},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: "task_id", Description: "is required"},
			{Field: "title", Description: "is too long"},
		}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)},
	)
	f := newFake().script("GetPlan", st.Err())
	client := dialFake(t, f)
	_, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{})

	var e *taskplans.Error
	if !errors.As(err, &e) {
		t.Fatalf("err %T is not a *taskplans.Error", err)
	}
	if e.Code != codes.InvalidArgument || e.CodeName() != "INVALID_ARGUMENT" || e.Reason != "INVALID_FIELD" ||
		e.NextAction != "Correct task_id and retry." || e.Message != "Field task_id is required." {
		t.Fatalf("error %#v", e)
	}
	if !maps.Equal(e.Metadata, metadata) {
		t.Fatalf("metadata %v, want %v", e.Metadata, metadata)
	}
	wantViolations := []taskplans.FieldViolation{{"task_id", "is required"}, {"title", "is too long"}}
	if !slices.Equal(e.FieldViolations, wantViolations) {
		t.Fatalf("field violations %v", e.FieldViolations)
	}
	if !e.HasRetryDelay || e.RetryDelay != 1500*time.Millisecond {
		t.Fatalf("retry delay %v (%v)", e.RetryDelay, e.HasRetryDelay)
	}
	if got := e.Error(); got != "taskplans: INVALID_ARGUMENT INVALID_FIELD: Field task_id is required." {
		t.Fatalf("Error() = %q", got)
	}
	// The status it came from, so gRPC's readers and the older helpers keep working.
	if s, ok := status.FromError(err); !ok || s.Code() != codes.InvalidArgument || s.Message() != "Field task_id is required." {
		t.Fatalf("status.FromError = %v, %v", s, ok)
	}
	if taskplans.Code(err) != codes.InvalidArgument || taskplans.Reason(err) != "INVALID_FIELD" ||
		taskplans.NextAction(err) != "Correct task_id and retry." || len(taskplans.FieldViolations(err)) != 2 ||
		taskplans.ErrorInfo(err).GetDomain() != taskplans.ErrorDomain {
		t.Fatal("the older helpers do not read the typed error")
	}
	// Wrapped by the caller, it is still found.
	if wrapped := fmt.Errorf("loading the plan: %w", err); taskplans.FromError(wrapped) != e || !taskplans.IsInvalidArgument(wrapped) {
		t.Fatal("a wrapped *Error is not found")
	}
}

func TestAnErrorOfTheClientLibraryHasNoReason(t *testing.T) {
	// Nothing listens on port 1: the client library raises UNAVAILABLE itself.
	client, err := taskplans.Dial("127.0.0.1:1", taskplans.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	_, err = client.Plans.GetPlan(background(t), &v1.GetPlanRequest{})
	var e *taskplans.Error
	if !errors.As(err, &e) || e.Code != codes.Unavailable || e.Reason != "" || e.Metadata != nil ||
		e.NextAction != "" || e.FieldViolations != nil || e.HasRetryDelay {
		t.Fatalf("err %#v; want UNAVAILABLE with no ErrorInfo", err)
	}
	if !taskplans.IsRetriable(err) {
		t.Fatal("a refused connection is not retriable")
	}
}

func TestFromErrorReadsAnyError(t *testing.T) {
	if taskplans.FromError(nil) != nil {
		t.Fatal("FromError(nil) is not nil")
	}
	plain := errors.New("plain")
	if e := taskplans.FromError(plain); e.Code != codes.Unknown || e.Reason != "" || !errors.Is(e, plain) {
		t.Fatalf("FromError(plain) = %#v", e)
	}
	if e := taskplans.FromError(context.Canceled); e.Code != codes.Canceled {
		t.Fatalf("FromError(context.Canceled) = %#v", e)
	}
	if e := taskplans.FromError(fmt.Errorf("waiting: %w", context.DeadlineExceeded)); e.Code != codes.DeadlineExceeded {
		t.Fatalf("FromError(deadline) = %#v", e)
	}
	if e := taskplans.FromError(status.Error(codes.NotFound, "gone")); e.Code != codes.NotFound || e.Message != "gone" {
		t.Fatalf("FromError(status) = %#v", e)
	}
}

func TestTheHelpersGroupErrorsByReason(t *testing.T) {
	helpers := map[string]func(error) bool{
		"IsVersionMismatch":     taskplans.IsVersionMismatch,
		"IsNotFound":            taskplans.IsNotFound,
		"IsAlreadyExists":       taskplans.IsAlreadyExists,
		"IsAuthError":           taskplans.IsAuthError,
		"IsInvalidArgument":     taskplans.IsInvalidArgument,
		"IsPreconditionFailed":  taskplans.IsPreconditionFailed,
		"IsRateLimited":         taskplans.IsRateLimited,
		"IsRetriable":           taskplans.IsRetriable,
		"IsWatchHistoryExpired": taskplans.IsWatchHistoryExpired,
		"IsWatchTooSlow":        taskplans.IsWatchTooSlow,
		"IsHistoryUnavailable":  taskplans.IsHistoryUnavailable,
		"IsMergeConflict":       taskplans.IsMergeConflict,
	}
	cases := []struct {
		code   codes.Code
		reason string
		true   []string // the helpers true for it; every other one is false
	}{
		{codes.Aborted, "VERSION_MISMATCH", []string{"IsVersionMismatch"}},
		{codes.Aborted, "REVISION_CHANGED", []string{"IsVersionMismatch"}},
		{codes.NotFound, "PLAN_NOT_FOUND", []string{"IsNotFound"}},
		{codes.NotFound, "TASK_NOT_FOUND", []string{"IsNotFound"}},
		{codes.NotFound, "REVISION_NOT_FOUND", []string{"IsNotFound"}},
		{codes.AlreadyExists, "TASK_EXISTS", []string{"IsAlreadyExists"}},
		{codes.AlreadyExists, "PLAN_EXISTS", []string{"IsAlreadyExists"}},
		{codes.Unauthenticated, "TOKEN_EXPIRED", []string{"IsAuthError"}},
		{codes.Unauthenticated, "", []string{"IsAuthError"}},
		{codes.PermissionDenied, "TASK_NOT_REACHABLE", []string{"IsAuthError"}},
		{codes.InvalidArgument, "INVALID_FIELD", []string{"IsInvalidArgument"}},
		{codes.InvalidArgument, "REQUEST_ID_REUSED", []string{"IsInvalidArgument"}},
		{codes.FailedPrecondition, "REDUCTION_NOT_ACKNOWLEDGED", []string{"IsPreconditionFailed"}},
		{codes.FailedPrecondition, "PLAN_TOO_LARGE", []string{"IsPreconditionFailed"}},
		{codes.ResourceExhausted, "RATE_LIMITED", []string{"IsRateLimited", "IsRetriable"}},
		{codes.ResourceExhausted, "WRITE_BUDGET_EXCEEDED", []string{"IsRateLimited", "IsRetriable"}},
		{codes.ResourceExhausted, "EXPENSIVE_CALLS_LIMITED", []string{"IsRetriable"}},
		{codes.ResourceExhausted, "HISTORY_QUOTA_EXCEEDED", []string{"IsRateLimited"}},
		{codes.Unavailable, "", []string{"IsRetriable"}},
		{codes.Unavailable, "LOCK_UNAVAILABLE", []string{"IsRetriable"}},
		{codes.Unavailable, "WATCH_DRAINING", []string{"IsRetriable"}},
		{codes.Aborted, "WRITE_CONFLICT", []string{"IsRetriable"}},
		{codes.OutOfRange, "WATCH_HISTORY_EXPIRED", []string{"IsWatchHistoryExpired"}},
		{codes.ResourceExhausted, "WATCH_TOO_SLOW", []string{"IsWatchTooSlow"}},
		{codes.OutOfRange, "HISTORY_UNAVAILABLE", []string{"IsHistoryUnavailable"}},
		{codes.Aborted, "MERGE_CONFLICT", []string{"IsMergeConflict"}},
		{codes.InvalidArgument, "MERGE_NOT_APPLICABLE", []string{"IsInvalidArgument"}},
		{codes.DeadlineExceeded, "", nil},
		{codes.Canceled, "", nil},
		{codes.Internal, "INTERNAL", nil},
	}
	for _, c := range cases {
		err := rejection(c.code, c.reason, nil, 0)
		for name, helper := range helpers {
			if want := slices.Contains(c.true, name); helper(err) != want {
				t.Errorf("%s(%v %s) = %v, want %v", name, c.code, c.reason, !want, want)
			}
		}
	}
	for name, helper := range helpers {
		if helper(nil) || helper(errors.New("VERSION_MISMATCH")) {
			t.Errorf("%s is true for nil or a non-gRPC error", name)
		}
	}
}

func TestTheMetadataOfAMergeConflictAndOfUnavailableHistoryIsTyped(t *testing.T) {
	conflicts := "@@ base lines 3-3 @@\n<<<<<<< yours\n- b\n||||||| base\n- a\n=======\n- c\n>>>>>>> current\n"
	conflict := rejection(codes.Aborted, "MERGE_CONFLICT", map[string]string{
		"base_version": "4", "current_version": "6", "conflict_regions": "1", "conflicts": conflicts}, 0)
	if got, ok := taskplans.MergeConflictOf(conflict); !ok || got != (taskplans.MergeConflict{
		BaseVersion: 4, CurrentVersion: 6, ConflictRegions: 1, Conflicts: conflicts}) {
		t.Fatalf("MergeConflictOf = %+v, %v", got, ok)
	}
	if _, ok := taskplans.HistoryUnavailableOf(conflict); ok {
		t.Fatal("HistoryUnavailableOf reads a MERGE_CONFLICT")
	}
	read := rejection(codes.OutOfRange, "HISTORY_UNAVAILABLE", map[string]string{
		"since_version": "2", "current_version": "9", "oldest_version": "5"}, 0)
	if got, ok := taskplans.HistoryUnavailableOf(read); !ok || got != (taskplans.HistoryUnavailable{
		Version: 2, CurrentVersion: 9, OldestVersion: 5, HasOldestVersion: true}) {
		t.Fatalf("HistoryUnavailableOf(read) = %+v, %v", got, ok)
	}
	merge := rejection(codes.OutOfRange, "HISTORY_UNAVAILABLE", map[string]string{"expected_version": "2", "current_version": "9"}, 0)
	if got, ok := taskplans.HistoryUnavailableOf(merge); !ok || got != (taskplans.HistoryUnavailable{Version: 2, CurrentVersion: 9}) {
		t.Fatalf("HistoryUnavailableOf(merge) = %+v, %v", got, ok)
	}
	if _, ok := taskplans.MergeConflictOf(errors.New("MERGE_CONFLICT")); ok {
		t.Fatal("MergeConflictOf reads a non-gRPC error")
	}
	if _, ok := taskplans.MergeConflictOf(nil); ok {
		t.Fatal("MergeConflictOf reads nil")
	}
}
