package taskplans

import (
	"context"
	"io"

	"google.golang.org/grpc"
)

// The outermost interceptors: every error a Client's call returns is an *Error.

func typedErrors(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return asError(invoker(ctx, method, req, reply, cc, opts...))
}

func typedStreamErrors(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	stream, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, asError(err)
	}
	return typedStream{stream}, nil
}

// typedStream converts the errors of a stream's messages (io.EOF, the normal end, stays io.EOF).
type typedStream struct{ grpc.ClientStream }

func (s typedStream) RecvMsg(m any) error { return streamError(s.ClientStream.RecvMsg(m)) }
func (s typedStream) SendMsg(m any) error { return streamError(s.ClientStream.SendMsg(m)) }
func (s typedStream) CloseSend() error    { return streamError(s.ClientStream.CloseSend()) }

func streamError(err error) error {
	if err == io.EOF {
		return err
	}
	return asError(err)
}
