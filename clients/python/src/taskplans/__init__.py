"""Python client of the task-plan service (clients/SDK.md).

``dial(target, token=...)`` returns a ``Client``: every unary call has a deadline, safe calls are
retried (``RetryPolicy``), tokens come from a string, a provider or the call, every failure raises
``TaskPlansError``, and ``Client.watch()`` resumes a plan's change stream. Generated messages and
stubs: ``taskplans.v1`` (``plan_pb2``, ``plan_service_pb2``, ``plan_service_pb2_grpc``, ``task_pb2``,
``task_pb2_grpc``).
"""

from taskplans._interceptor import TokenProvider
from taskplans.client import DEFAULT_TIMEOUT, TLS, Client, dial
from taskplans.error_metadata import HistoryUnavailable, MergeConflict, history_unavailable_of, merge_conflict_of
from taskplans.errors import (
    Code,
    TaskPlansError,
    is_already_exists,
    is_auth_error,
    is_history_unavailable,
    is_invalid_argument,
    is_merge_conflict,
    is_not_found,
    is_precondition_failed,
    is_rate_limited,
    is_retriable,
    is_version_mismatch,
    is_watch_history_expired,
    is_watch_too_slow,
)
from taskplans.retry import DEFAULT_RETRY_POLICY, RetryPolicy
from taskplans.watch import Watch

__version__ = "0.2.0"

__all__ = [
    "DEFAULT_RETRY_POLICY",
    "DEFAULT_TIMEOUT",
    "TLS",
    "Client",
    "Code",
    "HistoryUnavailable",
    "MergeConflict",
    "RetryPolicy",
    "TaskPlansError",
    "TokenProvider",
    "Watch",
    "dial",
    "history_unavailable_of",
    "is_already_exists",
    "is_auth_error",
    "is_history_unavailable",
    "is_invalid_argument",
    "is_merge_conflict",
    "is_not_found",
    "is_precondition_failed",
    "is_rate_limited",
    "is_retriable",
    "is_version_mismatch",
    "is_watch_history_expired",
    "is_watch_too_slow",
    "merge_conflict_of",
]
