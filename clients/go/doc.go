// Package taskplans is the Go client of the task-plan service (proto package taskplans.v1).
//
// The generated messages and service stubs are in the subpackage taskplans/v1 (imported as
// taskplansv1). This package adds what clients/SDK.md asks of every client package:
//
//   - Dial with sensible defaults: keepalive within the server's policy, TLS and mTLS from PEM files
//     (WithTLS), a 30 s deadline on every unary call whose context has none (WithDefaultTimeout);
//   - safe retries, on by default (WithRetry, WithoutRetry): the reads and the writes that carry a
//     request_id (CreatePlan, UpdatePlan, EditPlan, RestorePlanRevision; the client sets a random
//     one, once per logical call, when the request has none) on UNAVAILABLE, RESOURCE_EXHAUSTED
//     RATE_LIMITED, WRITE_BUDGET_EXCEEDED or EXPENSIVE_CALLS_LIMITED and ABORTED WRITE_CONFLICT, with jittered exponential backoff that honours
//     RetryInfo, bounded in attempts, elapsed time and the call's deadline. No other write is retried;
//   - a bearer token (WithToken) or a token provider called before every attempt
//     (WithTokenProvider), and a per-call token that wins over both (WithCallToken, or an
//     "authorization" entry in the call's outgoing metadata);
//   - one typed error, *Error, for every failed call, with the helpers by reason group
//     (IsVersionMismatch, IsNotFound, ..., IsRetriable, IsMergeConflict, IsHistoryUnavailable),
//     typed readers of those two errors' metadata (MergeConflictOf, HistoryUnavailableOf) and the
//     older readers (Reason, NextAction, ErrorInfo, FieldViolations, Code), which work on any gRPC
//     error;
//   - Client.Watch, a WatchPlan that resumes after the last version it returned when a replica
//     drains or goes away.
package taskplans
