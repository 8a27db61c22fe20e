package taskplans_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc/codes"
)

const (
	snapshot = v1.PlanChangeKind_PLAN_CHANGE_KIND_SNAPSHOT
	updated  = v1.PlanChangeKind_PLAN_CHANGE_KIND_UPDATED
)

// versions reads n changes of w.
func versions(t *testing.T, w *taskplans.Watch, n int) []uint64 {
	t.Helper()
	var got []uint64
	for len(got) < n && w.Next() {
		got = append(got, w.Change().GetPlan().GetVersion())
	}
	if len(got) < n {
		t.Fatalf("the watch ended after %v: %v", got, w.Err())
	}
	return got
}

func TestWatchResumesAfterTheLastVersionWhenAReplicaDrains(t *testing.T) {
	draining := rejection(codes.Unavailable, "WATCH_DRAINING", map[string]string{"resume_after_version": "4"}, 0)
	f := newFake().watch(
		sends(draining, change(snapshot, 3), change(updated, 4)),
		sends(hang, change(updated, 5)),
	)
	var providerCalls atomic.Int32
	provider := func(context.Context) (string, error) { providerCalls.Add(1); return "t", nil }
	client := dialFake(t, f, taskplans.WithRetry(fast), taskplans.WithTokenProvider(provider))
	w := client.Watch(background(t), "t-1", taskplans.WatchIncludeContent())
	defer w.Close()
	if got := versions(t, w, 3); got[0] != 3 || got[1] != 4 || got[2] != 5 {
		t.Fatalf("versions %v, want 3,4,5", got)
	}
	opens := f.of("WatchPlan")
	if len(opens) != 2 || opens[0].afterVersion != nil || opens[1].afterVersion == nil || *opens[1].afterVersion != 4 {
		t.Fatalf("opens %+v; want one from a snapshot, then one after version 4", opens)
	}
	if !opens[0].content || !opens[1].content || providerCalls.Load() != 2 {
		t.Fatalf("the reopened stream lost include_content or its token (%d provider calls)", providerCalls.Load())
	}
	w.Close()
	if w.Next() || w.Err() != nil {
		t.Fatalf("after Close: Next true or Err %v", w.Err())
	}
}

func TestWatchResumesAfterTheCallersVersionWhenNothingWasReturned(t *testing.T) {
	f := newFake().watch(sends(unavailable()), sends(hang, change(updated, 8)))
	client := dialFake(t, f, taskplans.WithRetry(fast))
	w := client.Watch(background(t), "t-1", taskplans.WatchAfterVersion(7))
	defer w.Close()
	versions(t, w, 1)
	for i, open := range f.of("WatchPlan") {
		if open.afterVersion == nil || *open.afterVersion != 7 {
			t.Fatalf("open %d after %v, want 7", i+1, open.afterVersion)
		}
	}
}

func TestWatchEndsWithTheTypedErrorOfAnEndingItCannotResume(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		is    func(error) bool
		after string
	}{
		{"WATCH_HISTORY_EXPIRED", rejection(codes.OutOfRange, "WATCH_HISTORY_EXPIRED", map[string]string{"after_version": "100"}, 0), taskplans.IsWatchHistoryExpired, ""},
		{"WATCH_TOO_SLOW", rejection(codes.ResourceExhausted, "WATCH_TOO_SLOW", map[string]string{"resume_after_version": "3"}, 0), taskplans.IsWatchTooSlow, "3"},
		{"TASK_NOT_FOUND", rejection(codes.NotFound, "TASK_NOT_FOUND", nil, 0), taskplans.IsNotFound, ""},
		{"TOKEN_EXPIRED", rejection(codes.Unauthenticated, "TOKEN_EXPIRED", nil, 0), taskplans.IsAuthError, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake().watch(sends(c.err, change(snapshot, 3)))
			client := dialFake(t, f, taskplans.WithRetry(fast))
			w := client.Watch(background(t), "t-1")
			defer w.Close()
			versions(t, w, 1)
			if w.Next() {
				t.Fatal("Next is true after the stream's error")
			}
			var e *taskplans.Error
			if !errors.As(w.Err(), &e) || !c.is(w.Err()) || e.Metadata["resume_after_version"] != c.after {
				t.Fatalf("Err %#v; want %s", w.Err(), c.name)
			}
			if len(f.of("WatchPlan")) != 1 {
				t.Fatalf("opened %d times, want 1", len(f.of("WatchPlan")))
			}
		})
	}
}

func TestWatchAttemptsAreBoundedAndStartAgainAfterEveryChange(t *testing.T) {
	f := newFake().watch(
		sends(unavailable()), sends(unavailable()), // 2 failed attempts
		sends(unavailable(), change(snapshot, 1)), // a change: the count starts again
		sends(unavailable()), sends(unavailable()), sends(unavailable()),
	)
	client := dialFake(t, f, taskplans.WithRetry(taskplans.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond}))
	w := client.Watch(background(t), "t-1")
	defer w.Close()
	versions(t, w, 1)
	if w.Next() || taskplans.Code(w.Err()) != codes.Unavailable {
		t.Fatalf("Err %v; want the last UNAVAILABLE", w.Err())
	}
	// 3 attempts up to the change, then 3 from the stream that failed after it.
	if got := len(f.of("WatchPlan")); got != 5 {
		t.Fatalf("opened %d times, want 5", got)
	}
}

func TestWatchWithoutRetryEndsAtTheFirstError(t *testing.T) {
	f := newFake().watch(sends(unavailable(), change(snapshot, 1)))
	client := dialFake(t, f, taskplans.WithoutRetry())
	w := client.Watch(background(t), "t-1")
	defer w.Close()
	versions(t, w, 1)
	if w.Next() || !taskplans.IsRetriable(w.Err()) || len(f.of("WatchPlan")) != 1 {
		t.Fatalf("Err %v after %d opens; want UNAVAILABLE after 1", w.Err(), len(f.of("WatchPlan")))
	}
}

func TestWatchEndsWithoutErrorWhenItsContextIsCancelled(t *testing.T) {
	f := newFake().watch(sends(hang, change(snapshot, 1)))
	client := dialFake(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	w := client.Watch(ctx, "t-1")
	defer w.Close()
	versions(t, w, 1)
	time.AfterFunc(50*time.Millisecond, cancel) // while Next waits
	started := time.Now()
	if w.Next() || w.Err() != nil {
		t.Fatalf("Next after cancel: Err %v", w.Err())
	}
	if waited := time.Since(started); waited < 40*time.Millisecond || waited > 2*time.Second {
		t.Fatalf("Next returned after %v, want when the context was cancelled", waited)
	}
}

func TestWatchEndsWithoutErrorWhenTheServerEndsTheStream(t *testing.T) {
	f := newFake().watch(sends(nil, change(snapshot, 1)))
	client := dialFake(t, f)
	w := client.Watch(background(t), "t-1")
	defer w.Close()
	versions(t, w, 1)
	if w.Next() || w.Err() != nil || len(f.of("WatchPlan")) != 1 {
		t.Fatalf("Err %v after %d opens; want the end, with no error and no reopening", w.Err(), len(f.of("WatchPlan")))
	}
}

func TestARawWatchPlanStreamFailsWithTheTypedError(t *testing.T) {
	f := newFake().watch(sends(rejection(codes.OutOfRange, "WATCH_HISTORY_EXPIRED", nil, 0)))
	client := dialFake(t, f)
	stream, err := client.Plans.WatchPlan(background(t), &v1.WatchPlanRequest{TaskId: "t-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	var e *taskplans.Error
	if !errors.As(err, &e) || e.Reason != "WATCH_HISTORY_EXPIRED" {
		t.Fatalf("Recv err %#v", err)
	}
	ended := newFake().watch(sends(nil))
	stream, err = dialFake(t, ended).Plans.WatchPlan(background(t), &v1.WatchPlanRequest{TaskId: "t-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = stream.Recv(); err != io.EOF {
		t.Fatalf("the stream's normal end is %v, want io.EOF", err)
	}
}

func TestWatchEndsWithoutErrorWhenTheClientIsClosed(t *testing.T) {
	f := newFake().watch(sends(hang, change(snapshot, 1)))
	client := dialFake(t, f)
	w := client.Watch(background(t), "t-1")
	defer w.Close()
	versions(t, w, 1)
	time.AfterFunc(50*time.Millisecond, func() { _ = client.Close() })
	if w.Next() || w.Err() != nil {
		t.Fatalf("Next after the client's Close: Err %v", w.Err())
	}
}
