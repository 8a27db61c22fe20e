package taskplans

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	taskplansv1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// RetryPolicy says how the client retries the calls that are safe to retry (clients/SDK.md,
// "Retries"). A zero field takes its default, so RetryPolicy{MaxAttempts: 3} changes one setting.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included: 7 (backoffs of 0.1 s to 3.2 s,
	// 6.3 s in all: long enough to ride out a database restart).
	MaxAttempts int
	// InitialBackoff is the delay before the second attempt: 100 ms.
	InitialBackoff time.Duration
	// MaxBackoff caps each delay: 5 s.
	MaxBackoff time.Duration
	// Multiplier is how much each delay grows over the one before: 2.
	Multiplier float64
	// Jitter spreads each delay by a random factor in [1-Jitter, 1+Jitter]: 0.2. Negative: none.
	Jitter float64
	// MaxElapsed is how long after the first attempt the last may start: 30 s (and never past the
	// call's deadline).
	MaxElapsed time.Duration
}

// DefaultRetryPolicy is the policy a Client uses unless WithRetry or WithoutRetry says otherwise.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:    7,
		InitialBackoff: 100 * time.Millisecond,
		MaxBackoff:     5 * time.Second,
		Multiplier:     2,
		Jitter:         0.2,
		MaxElapsed:     30 * time.Second,
	}
}

// WithRetry sets the retry policy; its zero fields take the defaults of DefaultRetryPolicy.
func WithRetry(policy RetryPolicy) Option {
	return func(s *dialSettings) { p := policy.withDefaults(); s.retry = &p }
}

// WithoutRetry turns retries off: every call makes one attempt, a write is sent with the
// request_id the caller gave (or none), and Watch ends at the first error of its stream.
func WithoutRetry() Option { return func(s *dialSettings) { s.retry = nil } }

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = d.InitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.Multiplier <= 0 {
		p.Multiplier = d.Multiplier
	}
	switch {
	case p.Jitter == 0:
		p.Jitter = d.Jitter
	case p.Jitter < 0:
		p.Jitter = 0
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = d.MaxElapsed
	}
	return p
}

// delay is the wait before the attempt after failures failed ones: exponential backoff with jitter,
// at least the error's RetryInfo delay.
func (p RetryPolicy) delay(failures int, last *Error) time.Duration {
	backoff := float64(p.InitialBackoff)
	for i := 1; i < failures && backoff < float64(p.MaxBackoff); i++ {
		backoff *= p.Multiplier
	}
	backoff = min(backoff, float64(p.MaxBackoff))
	wait := time.Duration(backoff * (1 - p.Jitter + 2*p.Jitter*rand.Float64()))
	if last != nil && last.HasRetryDelay && last.RetryDelay > wait {
		wait = last.RetryDelay
	}
	return wait
}

// The calls the policy retries: the reads, and the writes that carry a request_id (set by the client
// when the caller gives none). No other write is retried: the caller decides.
var (
	retriedReads = map[string]bool{
		taskplansv1.PlanService_GetPlan_FullMethodName:           true,
		taskplansv1.PlanService_ListPlanRevisions_FullMethodName: true,
		taskplansv1.PlanService_GetPlanRevision_FullMethodName:   true,
		taskplansv1.PlanService_GetPlanChanges_FullMethodName:    true,
		taskplansv1.PlanService_DiffPlanRevisions_FullMethodName: true,
		taskplansv1.TaskService_GetTask_FullMethodName:           true,
		taskplansv1.TaskService_ListTasks_FullMethodName:         true,
		taskplansv1.TaskService_ExportTask_FullMethodName:        true,
	}
	retriedWrites = map[string]bool{
		taskplansv1.PlanService_CreatePlan_FullMethodName:          true,
		taskplansv1.PlanService_UpdatePlan_FullMethodName:          true,
		taskplansv1.PlanService_EditPlan_FullMethodName:            true,
		taskplansv1.PlanService_RestorePlanRevision_FullMethodName: true,
	}
)

// withRequestID is req with a random request_id when it has none: a copy, so the caller's message
// is left as it was and a reused message never carries a stale id into a different write.
func withRequestID(req any) any {
	type requestIDGetter interface{ GetRequestId() string }
	if r, ok := req.(requestIDGetter); !ok || r.GetRequestId() != "" {
		return req
	}
	message, ok := req.(proto.Message)
	if !ok {
		return req
	}
	id := uuid.NewString()
	switch r := proto.Clone(message).(type) {
	case *taskplansv1.CreatePlanRequest:
		r.RequestId = &id
		return r
	case *taskplansv1.UpdatePlanRequest:
		r.RequestId = &id
		return r
	case *taskplansv1.EditPlanRequest:
		r.RequestId = &id
		return r
	case *taskplansv1.RestorePlanRevisionRequest:
		r.RequestId = &id
		return r
	}
	return req
}

// retryInterceptor runs one logical call as up to policy.MaxAttempts attempts. It sits inside the
// deadline interceptor, so ctx's deadline covers every attempt and every backoff.
func retryInterceptor(policy RetryPolicy) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if !retriedReads[method] && !retriedWrites[method] {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		if retriedWrites[method] {
			req = withRequestID(req) // once per logical call: every attempt carries the same id
		}
		started := time.Now()
		deadline, hasDeadline := ctx.Deadline()
		for failures := 1; ; failures++ {
			err := invoker(ctx, method, req, reply, cc, opts...)
			if err == nil {
				return nil
			}
			last := FromError(err)
			if failures >= policy.MaxAttempts || !IsRetriable(last) || ctx.Err() != nil {
				return last
			}
			wait := policy.delay(failures, last)
			next := time.Now().Add(wait)
			if next.Sub(started) > policy.MaxElapsed || (hasDeadline && !next.Before(deadline)) {
				return last
			}
			if !sleep(ctx, wait) {
				return newError(codeOfContext(ctx), ctx.Err().Error(), ctx.Err())
			}
		}
	}
}

// sleep waits d, or less when ctx ends first (then false).
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func codeOfContext(ctx context.Context) codes.Code {
	if ctx.Err() == context.DeadlineExceeded {
		return codes.DeadlineExceeded
	}
	return codes.Canceled
}
