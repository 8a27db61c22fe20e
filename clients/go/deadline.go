package taskplans

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

// DefaultTimeout is the deadline of a unary call whose context has none, unless WithDefaultTimeout
// says otherwise.
const DefaultTimeout = 30 * time.Second

// WithDefaultTimeout sets the deadline of every unary call whose context has none (30 s by default;
// 0: none). It covers the whole logical call, retries and backoffs included. Watch streams have no
// deadline: keepalive finds a dead connection, and the context or Close ends them.
func WithDefaultTimeout(d time.Duration) Option { return func(s *dialSettings) { s.timeout = d } }

// deadlineInterceptor sits outside the retry interceptor, so one deadline spans every attempt.
func deadlineInterceptor(timeout time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, has := ctx.Deadline(); !has {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
