package taskplans

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is the error of every failed call made through a Client (unary calls, Watch, and the
// messages of a raw WatchPlan stream): the gRPC status with the rich error model already read.
// Get it with errors.As(err, &e) or FromError(err). It keeps the status it came from, so
// status.FromError, status.Code and the helpers Reason, NextAction, ErrorInfo and FieldViolations
// work on it as on any gRPC error.
type Error struct {
	// Code is the status code; CodeName spells it as the wire does ("ABORTED").
	Code codes.Code
	// Reason is ErrorInfo.reason ("VERSION_MISMATCH", ...), or "" when the error carries no
	// ErrorInfo (raised by the client library: a deadline, a dropped connection). Branch on it (or
	// on the Is* helpers), never on Message.
	Reason string
	// Metadata is ErrorInfo.metadata (next_action and request_id included); nil without ErrorInfo.
	Metadata map[string]string
	// NextAction is Metadata["next_action"]: what the server says to do next, or "".
	NextAction string
	// FieldViolations are the google.rpc.BadRequest field violations, in order.
	FieldViolations []FieldViolation
	// RetryDelay is the google.rpc.RetryInfo delay when HasRetryDelay is true.
	RetryDelay time.Duration
	// HasRetryDelay says whether the error carries a RetryInfo.
	HasRetryDelay bool
	// Message is the status message.
	Message string

	status *status.Status
	cause  error
}

// FieldViolation is one google.rpc.BadRequest field violation.
type FieldViolation struct {
	Field       string
	Description string
}

// CodeName is the status code's name as the wire and the other client packages spell it
// ("ABORTED", "UNAVAILABLE").
func (e *Error) CodeName() string {
	if name, ok := code.Code_name[int32(e.Code)]; ok {
		return name
	}
	return e.Code.String()
}

// Error is "CODE REASON: message" ("CODE: message" without a reason).
func (e *Error) Error() string {
	text := "taskplans: " + e.CodeName()
	if e.Reason != "" {
		text += " " + e.Reason
	}
	if e.Message != "" {
		text += ": " + e.Message
	}
	return text
}

// GRPCStatus is the status the error was read from (status.FromError uses it).
func (e *Error) GRPCStatus() *status.Status { return e.status }

// Unwrap is the error that caused this one outside gRPC (a token provider's error, a context's),
// or nil.
func (e *Error) Unwrap() error { return e.cause }

// FromError reads err as an *Error: err itself when it is (or wraps) one; else its gRPC status read
// into one (a context error becomes CANCELLED or DEADLINE_EXCEEDED, any other non-gRPC error
// UNKNOWN, with err as its cause). nil for nil.
func FromError(err error) *Error {
	if err == nil {
		return nil
	}
	var typed *Error
	if errors.As(err, &typed) {
		return typed
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if _, isStatus := status.FromError(err); !isStatus {
			e := fromStatus(status.FromContextError(err))
			e.cause = err
			return e
		}
	}
	st, isStatus := status.FromError(err)
	e := fromStatus(st)
	if !isStatus {
		e.cause = err
	}
	return e
}

// newError is an error the client raises itself (no ErrorInfo), caused by cause.
func newError(c codes.Code, message string, cause error) *Error {
	e := fromStatus(status.New(c, message))
	e.cause = cause
	return e
}

func fromStatus(st *status.Status) *Error {
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, detail := range st.Details() {
		switch d := detail.(type) {
		case *errdetails.ErrorInfo:
			if e.Metadata == nil { // the first ErrorInfo is the error's
				e.Reason, e.Metadata = d.GetReason(), d.GetMetadata()
				if e.Metadata == nil {
					e.Metadata = map[string]string{}
				}
				e.NextAction = e.Metadata["next_action"]
			}
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.FieldViolations = append(e.FieldViolations, FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		case *errdetails.RetryInfo:
			if d.GetRetryDelay() != nil {
				e.RetryDelay, e.HasRetryDelay = d.GetRetryDelay().AsDuration(), true
			}
		}
	}
	return e
}

// asError converts the error of a call (nil stays nil, io.EOF is not an error of a call).
func asError(err error) error {
	if err == nil {
		return nil
	}
	return FromError(err)
}
