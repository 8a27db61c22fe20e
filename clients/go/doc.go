// Package taskplans is the Go client of the task-plan service (proto package taskplans.v1).
//
// The generated messages and service stubs are in the subpackage taskplans/v1 (imported as
// taskplansv1). This package adds what every caller otherwise writes itself: Dial with sensible
// defaults (keepalive within the server's policy, retries of reads on UNAVAILABLE, a bearer token as
// per-call credentials, TLS and mTLS from PEM files with WithTLS) and readers of the rich error model
// (Reason, ErrorInfo, NextAction, FieldViolations).
//
// Writes are never retried by the channel. Retry a write yourself with the same request_id: the
// server answers a repeated request_id with the first outcome instead of writing twice.
package taskplans
