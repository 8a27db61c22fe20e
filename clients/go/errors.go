package taskplans

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the ErrorInfo.domain of every error the task-plan service sends.
const ErrorDomain = "taskplans"

// The readers below predate *Error and keep working on it and on any gRPC error (a call made
// through a connection of your own, say).

// ErrorInfo returns the google.rpc.ErrorInfo carried by a failed call, or nil.
func ErrorInfo(err error) *errdetails.ErrorInfo {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return nil
	}
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// Reason is ErrorInfo.reason ("VERSION_MISMATCH", ...), or "" when err carries none. Branch on it,
// never on the message.
func Reason(err error) string {
	if info := ErrorInfo(err); info != nil {
		return info.GetReason()
	}
	return ""
}

// NextAction is ErrorInfo.metadata["next_action"]: what the server says to do next, or "".
func NextAction(err error) string {
	if info := ErrorInfo(err); info != nil {
		return info.GetMetadata()["next_action"]
	}
	return ""
}

// FieldViolations returns the google.rpc.BadRequest field violations of an INVALID_FIELD error.
func FieldViolations(err error) []*errdetails.BadRequest_FieldViolation {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return nil
	}
	for _, detail := range st.Details() {
		if badRequest, ok := detail.(*errdetails.BadRequest); ok {
			return badRequest.GetFieldViolations()
		}
	}
	return nil
}

// Code is the status code of err (codes.OK for nil, codes.Unknown for a non-gRPC error).
func Code(err error) codes.Code { return status.Code(err) }
