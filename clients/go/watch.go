package taskplans

import (
	"context"
	"errors"
	"io"
	"time"

	taskplansv1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
)

// WatchOption changes what Watch watches.
type WatchOption func(*taskplansv1.WatchPlanRequest)

// WatchAfterVersion starts the watch after version (the changes after it, no snapshot).
func WatchAfterVersion(version uint64) WatchOption {
	return func(r *taskplansv1.WatchPlanRequest) { r.AfterVersion = &version }
}

// WatchIncludeContent sends each change's plan with its content.
func WatchIncludeContent() WatchOption {
	return func(r *taskplansv1.WatchPlanRequest) { r.IncludeContent = true }
}

// Watch follows a task's plan changes (WatchPlan), reopening the stream when it fails with an error
// the retry policy retries (a replica draining or gone). Read it like a bufio.Scanner:
//
//	w := client.Watch(ctx, "t-1")
//	defer w.Close()
//	for w.Next() {
//		change := w.Change()
//	}
//	if err := w.Err(); err != nil { ... } // an *Error
//
// A Watch is read from one goroutine; Close may be called from any.
type Watch struct {
	ctx     context.Context
	cancel  context.CancelFunc
	plans   taskplansv1.PlanServiceClient
	conn    *grpc.ClientConn // nil for a Client built by hand
	request *taskplansv1.WatchPlanRequest
	retry   *RetryPolicy

	stream   grpc.ServerStreamingClient[taskplansv1.PlanChange]
	change   *taskplansv1.PlanChange
	err      error
	done     bool
	failures int       // failed attempts since the last change
	failedAt time.Time // when the first of them failed
}

// Watch opens a watch of taskID's plan: a SNAPSHOT first unless WatchAfterVersion is given, then
// every change. The stream has no deadline: it ends when ctx ends, Close is called or the client is
// closed (Next is then false and Err nil), when the server ends it (the task is gone: Err nil), or
// with an error.
//
// On a retriable error (UNAVAILABLE of any reason, WATCH_DRAINING included) the watch reopens the
// stream after the last version it returned (or WatchAfterVersion's, or from a snapshot when it
// returned nothing yet), waiting as the client's retry policy says; the attempt count starts again
// after every change. Any other error (WATCH_HISTORY_EXPIRED, WATCH_TOO_SLOW, TASK_NOT_FOUND, auth)
// ends it, and so does a retriable one when retries are off or the policy's attempts or elapsed
// time run out: re-read the plan (or resume after Metadata["resume_after_version"]) and watch again.
func (c *Client) Watch(ctx context.Context, taskID string, options ...WatchOption) *Watch {
	request := &taskplansv1.WatchPlanRequest{TaskId: taskID}
	for _, option := range options {
		option(request)
	}
	ctx, cancel := context.WithCancel(ctx)
	return &Watch{ctx: ctx, cancel: cancel, plans: c.Plans, conn: c.Conn, request: request, retry: c.retry}
}

// Next waits for the next change; false when the watch has ended (then see Err).
func (w *Watch) Next() bool {
	for !w.done {
		if w.stream == nil {
			stream, err := w.plans.WatchPlan(w.ctx, w.request)
			if err != nil {
				w.failed(err)
				continue
			}
			w.stream = stream
		}
		change, err := w.stream.Recv()
		if err == nil {
			w.change, w.failures = change, 0
			if change.GetPlan() != nil {
				version := change.GetPlan().GetVersion()
				w.request.AfterVersion = &version // a reopened stream resumes after it
			}
			return true
		}
		w.stream = nil
		if errors.Is(err, io.EOF) {
			w.end(nil) // the server ended the watch: the task is gone
			continue
		}
		w.failed(err)
	}
	return false
}

// failed ends the watch with err, or waits to reopen the stream when the policy retries err.
func (w *Watch) failed(err error) {
	if w.ctx.Err() != nil || (w.conn != nil && w.conn.GetState() == connectivity.Shutdown) {
		w.end(nil) // cancelled, or the client closed: no error
		return
	}
	last := FromError(err)
	w.failures++
	if w.failures == 1 {
		w.failedAt = time.Now()
	}
	if w.retry == nil || w.failures >= w.retry.MaxAttempts || !IsRetriable(last) {
		w.end(last)
		return
	}
	wait := w.retry.delay(w.failures, last)
	if time.Now().Add(wait).Sub(w.failedAt) > w.retry.MaxElapsed {
		w.end(last)
		return
	}
	if !sleep(w.ctx, wait) {
		w.end(nil)
	}
}

func (w *Watch) end(err error) {
	w.done, w.err, w.change = true, err, nil
	w.cancel()
}

// Change is the change the last successful Next returned.
func (w *Watch) Change() *taskplansv1.PlanChange { return w.change }

// Err is the error that ended the watch (an *Error), or nil when it is still going, was cancelled
// (ctx, Close or the client's Close) or was ended by the server.
func (w *Watch) Err() error { return w.err }

// Close ends the watch: a Next waiting returns false, and Err stays nil. Safe to call from any
// goroutine, and more than once.
func (w *Watch) Close() error {
	w.cancel()
	return nil
}
