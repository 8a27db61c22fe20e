package taskplans

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

// TokenProvider returns the bearer token to send. The client calls it before every attempt of a
// unary call and before every (re)opening of a stream, so a provider that refreshes its token
// ahead of expiry keeps calls working. An error fails the call with UNAUTHENTICATED and no reason
// (the *Error wraps it); it is not retried.
type TokenProvider func(ctx context.Context) (string, error)

// WithToken sends "authorization: Bearer <token>" on every call (the service's JWT when auth is on),
// unless the call gives its own (WithCallToken, or "authorization" in its outgoing metadata).
func WithToken(token string) Option {
	return func(s *dialSettings) { s.token, s.tokenProvider = token, nil }
}

// WithTokenProvider sends the token provider returns on every call, unless the call gives its own
// (WithCallToken, or "authorization" in its outgoing metadata): then provider is not called.
// It replaces WithToken.
func WithTokenProvider(provider TokenProvider) Option {
	return func(s *dialSettings) { s.token, s.tokenProvider = "", provider }
}

// WithCallToken returns ctx with token as the call's bearer token: calls made with it send
// "authorization: Bearer <token>" instead of the client's token, and the client's token provider is
// not called. It replaces any "authorization" already in ctx's outgoing metadata.
func WithCallToken(ctx context.Context, token string) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy() // non-nil even when ctx has no metadata
	md.Set("authorization", "Bearer "+token)
	return metadata.NewOutgoingContext(ctx, md)
}

// auth adds the client's token to calls that carry no "authorization" of their own.
type auth struct {
	token    string
	provider TokenProvider
}

func (a auth) none() bool { return a.token == "" && a.provider == nil }

func (a auth) authorize(ctx context.Context) (context.Context, error) {
	if md, _ := metadata.FromOutgoingContext(ctx); len(md.Get("authorization")) > 0 {
		return ctx, nil // the call's own token wins
	}
	token := a.token
	if a.provider != nil {
		var err error
		if token, err = a.provider(ctx); err != nil {
			return nil, newError(codes.Unauthenticated, "taskplans: token provider: "+err.Error(), err)
		}
	}
	if token == "" {
		return ctx, nil
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), nil
}

// unary sits inside the retry interceptor: it runs once per attempt.
func (a auth) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	ctx, err := a.authorize(ctx)
	if err != nil {
		return err
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (a auth) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	ctx, err := a.authorize(ctx)
	if err != nil {
		return nil, err
	}
	return streamer(ctx, desc, cc, method, opts...)
}
