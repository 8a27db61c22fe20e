package taskplans_test

import (
	"context"
	"testing"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc/codes"
)

func TestACallWithoutADeadlineGetsTheDefaultTimeout(t *testing.T) {
	f := newFake()
	client := dialFake(t, f)
	started := time.Now()
	if _, err := client.Plans.GetPlan(context.Background(), &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	deadline := f.of("GetPlan")[0].deadline
	if left := deadline.Sub(started); left < 29*time.Second || left > 30*time.Second+100*time.Millisecond {
		t.Fatalf("the server saw a deadline %v ahead; want 30 s", left)
	}
}

func TestTheDefaultTimeoutEndsAHangingCall(t *testing.T) {
	f := newFake().script("GetPlan", hang)
	client := dialFake(t, f, taskplans.WithDefaultTimeout(200*time.Millisecond))
	started := time.Now()
	_, err := client.Plans.GetPlan(context.Background(), &v1.GetPlanRequest{})
	took := time.Since(started)
	e := taskplans.FromError(err)
	if e == nil || e.Code != codes.DeadlineExceeded || e.Reason != "" || e.CodeName() != "DEADLINE_EXCEEDED" {
		t.Fatalf("err %v; want DEADLINE_EXCEEDED raised by the client library", err)
	}
	if took < 200*time.Millisecond || took > 3*time.Second || len(f.of("GetPlan")) != 1 {
		t.Fatalf("took %v over %d attempts; want one attempt ended at 200 ms", took, len(f.of("GetPlan")))
	}
}

func TestTheCallsOwnDeadlineWins(t *testing.T) {
	f := newFake()
	client := dialFake(t, f, taskplans.WithDefaultTimeout(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	want, _ := ctx.Deadline()
	if got := f.of("GetPlan")[0].deadline; got.Sub(want).Abs() > time.Second {
		t.Fatalf("the server saw deadline %v, want the call's %v", got, want)
	}
}

func TestOneDeadlineCoversEveryAttempt(t *testing.T) {
	policy := taskplans.RetryPolicy{MaxAttempts: 20}
	f := newFake().script("GetPlan", rejection(codes.Unavailable, "LOCK_UNAVAILABLE", nil, 150*time.Millisecond))
	client := dialFake(t, f, taskplans.WithRetry(policy), taskplans.WithDefaultTimeout(500*time.Millisecond))
	started := time.Now()
	_, err := client.Plans.GetPlan(context.Background(), &v1.GetPlanRequest{})
	took := time.Since(started)
	attempts := f.of("GetPlan")
	// Attempts at about 0, 150, 300 ms; one at 450 ms may start, none after the deadline. Each attempt
	// with a deadline of its own would put them 150 ms apart.
	if taskplans.Reason(err) != "LOCK_UNAVAILABLE" || len(attempts) < 2 || len(attempts) > 4 || took > 2500*time.Millisecond {
		t.Fatalf("err %v after %d attempts in %v; want the last LOCK_UNAVAILABLE within the 500 ms deadline", err, len(attempts), took)
	}
	for i, a := range attempts {
		if a.deadline.Sub(attempts[0].deadline).Abs() > 100*time.Millisecond {
			t.Fatalf("attempt %d had deadline %v, the first %v; want one deadline for the call", i+1, a.deadline, attempts[0].deadline)
		}
	}
}

func TestAZeroDefaultTimeoutMeansNone(t *testing.T) {
	f := newFake()
	client := dialFake(t, f, taskplans.WithDefaultTimeout(0))
	if _, err := client.Plans.GetPlan(context.Background(), &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	if deadline := f.of("GetPlan")[0].deadline; !deadline.IsZero() {
		t.Fatalf("the server saw deadline %v, want none", deadline)
	}
}
