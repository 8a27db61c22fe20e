package taskplans_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

func TestAReadIsRetriedOnUnavailableUntilItAnswers(t *testing.T) {
	f := newFake().script("GetPlan", unavailable(), rejection(codes.Unavailable, "LOCK_UNAVAILABLE", nil, 0), nil)
	client := dialFake(t, f, taskplans.WithRetry(fast))
	response, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{TaskId: "t-1"})
	if err != nil || response.GetPlan().GetVersion() != 3 {
		t.Fatalf("GetPlan = %v, %v; want version 3", response, err)
	}
	if got := len(f.of("GetPlan")); got != 3 {
		t.Fatalf("attempts = %d, want 3", got)
	}
}

func TestWhichErrorsAreRetried(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		retried bool
	}{
		{"UNAVAILABLE without details", unavailable(), true},
		{"UNAVAILABLE STORAGE_UNAVAILABLE", rejection(codes.Unavailable, "STORAGE_UNAVAILABLE", nil, 0), true},
		{"RESOURCE_EXHAUSTED RATE_LIMITED", rejection(codes.ResourceExhausted, "RATE_LIMITED", nil, time.Millisecond), true},
		{"RESOURCE_EXHAUSTED WRITE_BUDGET_EXCEEDED", rejection(codes.ResourceExhausted, "WRITE_BUDGET_EXCEEDED", nil, time.Millisecond), true},
		{"RESOURCE_EXHAUSTED EXPENSIVE_CALLS_LIMITED", rejection(codes.ResourceExhausted, "EXPENSIVE_CALLS_LIMITED", nil, time.Millisecond), true},
		{"ABORTED WRITE_CONFLICT", rejection(codes.Aborted, "WRITE_CONFLICT", nil, 0), true},
		{"ABORTED VERSION_MISMATCH", rejection(codes.Aborted, "VERSION_MISMATCH", map[string]string{"next_action": "Read again."}, 0), false},
		{"ABORTED MERGE_CONFLICT", rejection(codes.Aborted, "MERGE_CONFLICT", map[string]string{"conflict_regions": "1"}, 0), false},
		{"INVALID_ARGUMENT MERGE_NOT_APPLICABLE", rejection(codes.InvalidArgument, "MERGE_NOT_APPLICABLE", nil, 0), false},
		{"OUT_OF_RANGE HISTORY_UNAVAILABLE", rejection(codes.OutOfRange, "HISTORY_UNAVAILABLE", nil, 0), false},
		{"RESOURCE_EXHAUSTED HISTORY_QUOTA_EXCEEDED", rejection(codes.ResourceExhausted, "HISTORY_QUOTA_EXCEEDED", nil, 0), false},
		{"ABORTED without a reason", rejection(codes.Aborted, "", nil, 0), false},
		{"DEADLINE_EXCEEDED", rejection(codes.DeadlineExceeded, "", nil, 0), false},
		{"CANCELLED", rejection(codes.Canceled, "", nil, 0), false},
		{"INVALID_ARGUMENT INVALID_FIELD", rejection(codes.InvalidArgument, "INVALID_FIELD", nil, 0), false},
		{"INTERNAL", rejection(codes.Internal, "INTERNAL", nil, 0), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake().script("UpdatePlan", c.err, nil)
			client := dialFake(t, f, taskplans.WithRetry(fast))
			_, err := client.Plans.UpdatePlan(background(t), &v1.UpdatePlanRequest{TaskId: "t-1", Content: "x"})
			attempts := len(f.of("UpdatePlan"))
			if c.retried {
				if err != nil || attempts != 2 {
					t.Fatalf("err %v after %d attempts; want success on the 2nd", err, attempts)
				}
				return
			}
			want := taskplans.FromError(c.err)
			var got *taskplans.Error
			if !errors.As(err, &got) || got.Code != want.Code || got.Reason != want.Reason || attempts != 1 {
				t.Fatalf("err %#v after %d attempts; want %s %q after 1", err, attempts, want.CodeName(), want.Reason)
			}
			if taskplans.IsRetriable(err) {
				t.Fatal("IsRetriable is true for an error the policy does not retry")
			}
		})
	}
}

func TestOnlyReadsAndWritesWithARequestIDAreRetried(t *testing.T) {
	ctx := background(t)
	calls := map[string]func(c *taskplans.Client) error{
		"GetPlan": func(c *taskplans.Client) error {
			_, err := c.Plans.GetPlan(ctx, &v1.GetPlanRequest{})
			return err
		},
		"ListPlanRevisions": func(c *taskplans.Client) error {
			_, err := c.Plans.ListPlanRevisions(ctx, &v1.ListPlanRevisionsRequest{})
			return err
		},
		"GetPlanRevision": func(c *taskplans.Client) error {
			_, err := c.Plans.GetPlanRevision(ctx, &v1.GetPlanRevisionRequest{})
			return err
		},
		"GetPlanChanges": func(c *taskplans.Client) error {
			_, err := c.Plans.GetPlanChanges(ctx, &v1.GetPlanChangesRequest{})
			return err
		},
		"DiffPlanRevisions": func(c *taskplans.Client) error {
			_, err := c.Plans.DiffPlanRevisions(ctx, &v1.DiffPlanRevisionsRequest{})
			return err
		},
		"GetTask": func(c *taskplans.Client) error {
			_, err := c.Tasks.GetTask(ctx, &v1.GetTaskRequest{})
			return err
		},
		"CreatePlan": func(c *taskplans.Client) error {
			_, err := c.Plans.CreatePlan(ctx, &v1.CreatePlanRequest{})
			return err
		},
		"UpdatePlan": func(c *taskplans.Client) error {
			_, err := c.Plans.UpdatePlan(ctx, &v1.UpdatePlanRequest{})
			return err
		},
		"EditPlan": func(c *taskplans.Client) error {
			_, err := c.Plans.EditPlan(ctx, &v1.EditPlanRequest{})
			return err
		},
		"RestorePlanRevision": func(c *taskplans.Client) error {
			_, err := c.Plans.RestorePlanRevision(ctx, &v1.RestorePlanRevisionRequest{})
			return err
		},
		"SavePlan": func(c *taskplans.Client) error {
			_, err := c.Plans.SavePlan(ctx, &v1.SavePlanRequest{})
			return err
		},
		"DeletePlan": func(c *taskplans.Client) error {
			_, err := c.Plans.DeletePlan(ctx, &v1.DeletePlanRequest{})
			return err
		},
		"RevertPlan": func(c *taskplans.Client) error {
			_, err := c.Plans.RevertPlan(ctx, &v1.RevertPlanRequest{})
			return err
		},
		"MarkImplementationStarted": func(c *taskplans.Client) error {
			_, err := c.Plans.MarkImplementationStarted(ctx, &v1.MarkImplementationStartedRequest{})
			return err
		},
		"CreateTask": func(c *taskplans.Client) error {
			_, err := c.Tasks.CreateTask(ctx, &v1.CreateTaskRequest{})
			return err
		},
		"DeleteTask": func(c *taskplans.Client) error {
			_, err := c.Tasks.DeleteTask(ctx, &v1.DeleteTaskRequest{})
			return err
		},
	}
	retried := map[string]bool{
		"GetPlan": true, "ListPlanRevisions": true, "GetPlanRevision": true, "GetTask": true,
		"GetPlanChanges": true, "DiffPlanRevisions": true, "CreatePlan": true, "UpdatePlan": true, "EditPlan": true, "RestorePlanRevision": true,
	}
	f := newFake()
	for method := range calls {
		f.script(method, unavailable(), nil)
	}
	client := dialFake(t, f, taskplans.WithRetry(fast))
	for method, call := range calls {
		err := call(client)
		attempts := f.of(method)
		switch {
		case retried[method] && (err != nil || len(attempts) != 2):
			t.Errorf("%s: err %v after %d attempts; want success on the 2nd", method, err, len(attempts))
		case !retried[method] && (taskplans.FromError(err).Code != codes.Unavailable || len(attempts) != 1):
			t.Errorf("%s: err %v after %d attempts; want UNAVAILABLE after 1", method, err, len(attempts))
		}
		if _, write := map[string]bool{"CreatePlan": true, "UpdatePlan": true, "EditPlan": true, "RestorePlanRevision": true}[method]; write {
			if first, second := attempts[0].requestID, attempts[1].requestID; first == nil || second == nil || *first != *second {
				t.Errorf("%s: request ids %v, %v; want one id on both attempts", method, first, second)
			}
		}
	}
}

func TestEveryAttemptOfAWriteCarriesTheSameGeneratedRequestID(t *testing.T) {
	f := newFake().script("UpdatePlan", unavailable(), rejection(codes.Aborted, "WRITE_CONFLICT", nil, 0), nil)
	client := dialFake(t, f, taskplans.WithRetry(fast))
	request := &v1.UpdatePlanRequest{TaskId: "t-1", Mode: v1.WriteMode_WRITE_MODE_APPEND, Content: "- x\n"}
	response, err := client.Plans.UpdatePlan(background(t), request)
	if err != nil || response.GetPlan().GetVersion() != 6 {
		t.Fatalf("UpdatePlan = %v, %v; want the 3rd attempt's answer (version 6)", response, err)
	}
	attempts := f.of("UpdatePlan")
	if len(attempts) != 3 {
		t.Fatalf("attempts = %d, want 3", len(attempts))
	}
	id := attempts[0].requestID
	if id == nil {
		t.Fatal("the first attempt carried no request_id")
	}
	if _, err := uuid.Parse(*id); err != nil {
		t.Fatalf("request_id %q is not a UUID", *id)
	}
	for i, a := range attempts {
		if a.requestID == nil || *a.requestID != *id {
			t.Fatalf("attempt %d carried request_id %v, want %q", i+1, a.requestID, *id)
		}
	}
	if request.RequestId != nil {
		t.Fatalf("the caller's request was changed: request_id %q", request.GetRequestId())
	}
	// The next logical call, with the same message, gets an id of its own.
	if _, err := client.Plans.UpdatePlan(background(t), request); err != nil {
		t.Fatal(err)
	}
	if next := f.of("UpdatePlan")[3].requestID; next == nil || *next == *id {
		t.Fatalf("the second call reused request_id %v", next)
	}
}

func TestAMergedEditIsRetriedWithOneRequestIDAndAnswersItsMerge(t *testing.T) {
	f := newFake().script("EditPlan", unavailable(), nil)
	client := dialFake(t, f, taskplans.WithRetry(fast))
	request := &v1.EditPlanRequest{TaskId: "t-1", ExpectedVersion: proto.Uint64(2), OldText: "a", NewText: "b", Merge: proto.Bool(true)}
	response, err := client.Plans.EditPlan(background(t), request)
	if err != nil || response.GetMerge().GetFromVersion() != 2 || response.GetMerge().GetToVersion() != 4 {
		t.Fatalf("EditPlan = %v, %v; want merged from 2 to 4", response, err)
	}
	attempts := f.of("EditPlan")
	if len(attempts) != 2 || attempts[0].requestID == nil || attempts[1].requestID == nil || *attempts[0].requestID != *attempts[1].requestID {
		t.Fatalf("attempts %v; want two with one request id", attempts)
	}
	if request.RequestId != nil {
		t.Fatal("the caller's request was changed")
	}
}

func TestTheCallersRequestIDIsSentOnEveryAttempt(t *testing.T) {
	f := newFake().script("CreatePlan", unavailable(), nil)
	client := dialFake(t, f, taskplans.WithRetry(fast))
	if _, err := client.Plans.CreatePlan(background(t), &v1.CreatePlanRequest{TaskId: "t-1", Content: "# P\n", RequestId: proto.String("mine-1")}); err != nil {
		t.Fatal(err)
	}
	for i, a := range f.of("CreatePlan") {
		if a.requestID == nil || *a.requestID != "mine-1" {
			t.Fatalf("attempt %d carried request_id %v, want mine-1", i+1, a.requestID)
		}
	}
}

func TestTheDelayHonoursRetryInfo(t *testing.T) {
	const retryDelay = 300 * time.Millisecond
	for _, reason := range []string{"RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "EXPENSIVE_CALLS_LIMITED"} {
		t.Run(reason, func(t *testing.T) {
			f := newFake().script("GetPlan", rejection(codes.ResourceExhausted, reason, nil, retryDelay), nil)
			client := dialFake(t, f, taskplans.WithRetry(fast))
			if _, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{}); err != nil {
				t.Fatal(err)
			}
			attempts := f.of("GetPlan")
			if gap := attempts[1].at.Sub(attempts[0].at); gap < retryDelay || gap > retryDelay+3*time.Second {
				t.Fatalf("second attempt %v after the first; want RetryInfo's %v (the policy's backoff is 5 ms)", gap, retryDelay)
			}
		})
	}
}

func TestTheDelaysFollowTheBackoff(t *testing.T) {
	policy := taskplans.RetryPolicy{MaxAttempts: 4, InitialBackoff: 100 * time.Millisecond, Multiplier: 2}
	f := newFake().script("GetPlan", unavailable())
	client := dialFake(t, f, taskplans.WithRetry(policy))
	_, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{})
	attempts := f.of("GetPlan")
	if !taskplans.IsRetriable(err) || len(attempts) != 4 {
		t.Fatalf("err %v after %d attempts; want the last UNAVAILABLE after 4", err, len(attempts))
	}
	// 100 ms, 200 ms, 400 ms, each times a factor in [0.8, 1.2] (plus scheduling).
	for i, base := range []time.Duration{100, 200, 400} {
		base *= time.Millisecond
		gap := attempts[i+1].at.Sub(attempts[i].at)
		if gap < base*8/10 || gap > base*12/10+time.Second { // a loaded machine only adds
			t.Errorf("delay %d = %v, want %v ± 20%%", i+1, gap, base)
		}
	}
}

func TestAttemptsAreBoundedByDefaultToSeven(t *testing.T) {
	f := newFake().script("GetPlan", unavailable())
	client := dialFake(t, f) // the default policy: 100 ms, 200 ms, 400 ms, 800 ms, 1.6 s, 3.2 s
	started := time.Now()
	_, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{})
	if e := taskplans.FromError(err); e == nil || e.Code != codes.Unavailable || e.Message != "scripted: connection dropped" {
		t.Fatalf("err %v; want the last attempt's UNAVAILABLE", err)
	}
	if got := len(f.of("GetPlan")); got != 7 {
		t.Fatalf("attempts = %d, want 7", got)
	}
	// At least 5 s (6.3 s less the jitter): longer than a database restart (2.2 to 2.5 s measured).
	if took := time.Since(started); took < 5000*time.Millisecond || took > 15*time.Second {
		t.Fatalf("took %v; want about 6.3 s of backoff", took)
	}
}

func TestTheElapsedTimeIsBounded(t *testing.T) {
	policy := taskplans.RetryPolicy{MaxAttempts: 20, MaxElapsed: 500 * time.Millisecond}
	f := newFake().script("GetPlan", rejection(codes.Unavailable, "LOCK_UNAVAILABLE", nil, 200*time.Millisecond))
	client := dialFake(t, f, taskplans.WithRetry(policy))
	started := time.Now()
	_, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{})
	took := time.Since(started)
	// Attempts at about 0, 200 and 400 ms; one at 600 ms would pass the 500 ms bound, so none.
	// A loaded machine may fit fewer; never more (20 without the bound).
	if n := len(f.of("GetPlan")); taskplans.Reason(err) != "LOCK_UNAVAILABLE" || n < 1 || n > 3 || took > 3*time.Second {
		t.Fatalf("err %v after %d attempts in %v; want LOCK_UNAVAILABLE after at most 3", err, n, took)
	}
}

func TestNoBackoffSleepsPastTheDeadline(t *testing.T) {
	f := newFake().script("GetPlan", rejection(codes.ResourceExhausted, "RATE_LIMITED", nil, 5*time.Second))
	client := dialFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	started := time.Now()
	_, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{})
	// The 5 s wait RetryInfo asks for would pass the deadline: the call ends at once with that error
	// (had it slept into the deadline, it would end DEADLINE_EXCEEDED after 2 s).
	if !taskplans.IsRateLimited(err) || len(f.of("GetPlan")) != 1 || time.Since(started) > 1500*time.Millisecond {
		t.Fatalf("err %v after %d attempts in %v; want RATE_LIMITED at once", err, len(f.of("GetPlan")), time.Since(started))
	}
}

func TestWithoutRetryMakesOneAttemptAndSetsNoRequestID(t *testing.T) {
	f := newFake().script("GetPlan", unavailable(), nil).script("UpdatePlan", unavailable(), nil)
	client := dialFake(t, f, taskplans.WithoutRetry())
	if _, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{}); taskplans.Code(err) != codes.Unavailable {
		t.Fatalf("GetPlan err %v, want UNAVAILABLE", err)
	}
	if _, err := client.Plans.UpdatePlan(background(t), &v1.UpdatePlanRequest{}); taskplans.Code(err) != codes.Unavailable {
		t.Fatalf("UpdatePlan err %v, want UNAVAILABLE", err)
	}
	if len(f.of("GetPlan")) != 1 || len(f.of("UpdatePlan")) != 1 || f.of("UpdatePlan")[0].requestID != nil {
		t.Fatalf("attempts %v", f.attempts)
	}
}
