"""The typed error of every failed call, and readers of the rich error model (google.rpc.Status in the
grpc-status-details-bin trailer)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

import grpc
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2

ERROR_DOMAIN = "taskplans"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"

Metadata = Tuple[Tuple[str, Union[str, bytes]], ...]


class Code(str):
    """A status code's name (``"ABORTED"``). Calling it returns the ``grpc.StatusCode``, as
    ``grpc.RpcError.code()`` does, so ``error.code == "ABORTED"`` and
    ``error.code() == grpc.StatusCode.ABORTED`` both hold."""

    __slots__ = ()

    def __call__(self) -> grpc.StatusCode:
        return grpc.StatusCode[self]

    @classmethod
    def of(cls, status: grpc.StatusCode) -> "Code":
        return cls(status.name)


class TaskPlansError(grpc.RpcError, grpc.Call):
    """What every failed call of the client raises (clients/SDK.md, "Typed errors").

    It is a ``grpc.RpcError`` and a ``grpc.Call``, like the errors gRPC raises itself, so code that
    catches ``grpc.RpcError`` and calls ``code()``, ``details()`` or ``trailing_metadata()`` keeps
    working, and so does ``grpc_status.rpc_status.from_call(error)``.

    - ``code``: the status code's name (``"ABORTED"``, a ``str``); ``code()`` is the ``grpc.StatusCode``.
    - ``reason``: ``ErrorInfo.reason``, or None when the error carries no ErrorInfo (raised by the
      client library: a deadline, a dropped connection, a failing token provider).
    - ``metadata``: ``ErrorInfo.metadata`` (``next_action`` and ``request_id`` included).
    - ``next_action``: ``metadata["next_action"]``, or None.
    - ``field_violations``: the ``BadRequest`` field violations as ``(field, description)`` pairs.
    - ``retry_delay``: the ``RetryInfo`` delay in seconds, or None when absent.
    - ``message``: the status message.
    """

    def __init__(
        self,
        status: grpc.StatusCode,
        message: str = "",
        *,
        reason: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
        field_violations: Sequence[Tuple[str, str]] = (),
        retry_delay: Optional[float] = None,
        error_info: Optional[error_details_pb2.ErrorInfo] = None,
        trailing_metadata: Metadata = (),
        initial_metadata: Metadata = (),
    ) -> None:
        self.status_code: grpc.StatusCode = status
        self.reason: Optional[str] = reason
        self.metadata: Dict[str, str] = dict(metadata or {})
        self.next_action: Optional[str] = self.metadata.get("next_action") or None
        self.field_violations: List[Tuple[str, str]] = list(field_violations)
        self.retry_delay: Optional[float] = retry_delay
        self.message: str = message
        self.error_info: Optional[error_details_pb2.ErrorInfo] = error_info
        self._trailing_metadata = tuple(trailing_metadata)
        self._initial_metadata = tuple(initial_metadata)
        super().__init__(f"{status.name} {reason or '-'}: {message}")

    @property
    def code(self) -> Code:
        return Code.of(self.status_code)

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "TaskPlansError":
        """The typed error of a failed gRPC call (any ``grpc.RpcError``)."""
        if isinstance(error, TaskPlansError):
            return error
        status = _call(error, "code", grpc.StatusCode.UNKNOWN)
        if not isinstance(status, grpc.StatusCode):
            status = grpc.StatusCode.UNKNOWN
        message = _call(error, "details", None) or ""
        trailing: Metadata = tuple(_call(error, "trailing_metadata", None) or ())
        initial: Metadata = tuple(_call(error, "initial_metadata", None) or ())
        info: Optional[error_details_pb2.ErrorInfo] = None
        violations: List[Tuple[str, str]] = []
        retry_delay: Optional[float] = None
        for detail in _status_details(trailing):
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR) and info is None:
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad_request = error_details_pb2.BadRequest()
                detail.Unpack(bad_request)
                violations += [(v.field, v.description) for v in bad_request.field_violations]
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR) and retry_delay is None:
                retry_info = error_details_pb2.RetryInfo()
                detail.Unpack(retry_info)
                retry_delay = retry_info.retry_delay.seconds + retry_info.retry_delay.nanos / 1e9
        typed = cls(
            status,
            message,
            reason=info.reason if info is not None else None,
            metadata=dict(info.metadata) if info is not None else None,
            field_violations=violations,
            retry_delay=retry_delay,
            error_info=info,
            trailing_metadata=trailing,
            initial_metadata=initial,
        )
        typed.__cause__ = error
        return typed

    # grpc.Call (the call has ended).
    def details(self) -> str:
        return self.message

    # types-grpcio's RpcError and Call disagree on this type; gRPC returns (key, value) pairs.
    def trailing_metadata(self) -> Metadata:  # type: ignore[override]
        return self._trailing_metadata

    def initial_metadata(self) -> Metadata:
        return self._initial_metadata

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float:
        return 0.0

    def cancel(self) -> bool:
        return False

    def add_callback(self, callback: Callable[[], None]) -> bool:
        return False


def _call(error: object, name: str, default: Any) -> Any:
    method = getattr(error, name, None)
    if not callable(method):
        return default
    try:
        return method()
    except Exception:  # an RpcError that is not a Call (raised before the call started)
        return default


def _status_details(trailing: Metadata) -> List[Any]:
    for key, value in trailing:
        if key == _STATUS_DETAILS_KEY and isinstance(value, bytes):
            try:
                return list(status_pb2.Status.FromString(value).details)
            except DecodeError:
                return []
    return []


def as_error(error: BaseException) -> Optional[TaskPlansError]:
    """``error`` as a TaskPlansError when it is one or any other ``grpc.RpcError``, else None."""
    if isinstance(error, TaskPlansError):
        return error
    if isinstance(error, grpc.RpcError):
        return TaskPlansError.from_rpc_error(error)
    return None


def _reason_in(error: BaseException, *reasons: str) -> bool:
    typed = as_error(error)
    return typed is not None and typed.reason in reasons


def _code_is(error: BaseException, status: grpc.StatusCode) -> bool:
    typed = as_error(error)
    return typed is not None and typed.status_code == status


def is_version_mismatch(error: BaseException) -> bool:
    """Reason VERSION_MISMATCH or REVISION_CHANGED: read again, then decide again."""
    return _reason_in(error, "VERSION_MISMATCH", "REVISION_CHANGED")


def is_not_found(error: BaseException) -> bool:
    """Reason PLAN_NOT_FOUND, TASK_NOT_FOUND or REVISION_NOT_FOUND."""
    return _reason_in(error, "PLAN_NOT_FOUND", "TASK_NOT_FOUND", "REVISION_NOT_FOUND")


def is_already_exists(error: BaseException) -> bool:
    """Reason TASK_EXISTS or PLAN_EXISTS."""
    return _reason_in(error, "TASK_EXISTS", "PLAN_EXISTS")


def is_auth_error(error: BaseException) -> bool:
    """Code UNAUTHENTICATED, or reason TASK_NOT_REACHABLE."""
    return _code_is(error, grpc.StatusCode.UNAUTHENTICATED) or _reason_in(error, "TASK_NOT_REACHABLE")


def is_invalid_argument(error: BaseException) -> bool:
    """Code INVALID_ARGUMENT."""
    return _code_is(error, grpc.StatusCode.INVALID_ARGUMENT)


def is_precondition_failed(error: BaseException) -> bool:
    """Code FAILED_PRECONDITION (the content rules: reduction, size, edit text)."""
    return _code_is(error, grpc.StatusCode.FAILED_PRECONDITION)


def is_rate_limited(error: BaseException) -> bool:
    """Reason RATE_LIMITED, WRITE_BUDGET_EXCEEDED or HISTORY_QUOTA_EXCEEDED."""
    return _reason_in(error, "RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "HISTORY_QUOTA_EXCEEDED")


def is_retriable(error: BaseException) -> bool:
    """What the retry policy retries: UNAVAILABLE (any reason), RESOURCE_EXHAUSTED RATE_LIMITED,
    WRITE_BUDGET_EXCEEDED or EXPENSIVE_CALLS_LIMITED (all with RetryInfo) and ABORTED WRITE_CONFLICT, whatever the method."""
    typed = as_error(error)
    if typed is None:
        return False
    code, reason = typed.status_code, typed.reason
    return (
        code == grpc.StatusCode.UNAVAILABLE
        or (code == grpc.StatusCode.RESOURCE_EXHAUSTED and reason in ("RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "EXPENSIVE_CALLS_LIMITED"))
        or (code == grpc.StatusCode.ABORTED and reason == "WRITE_CONFLICT")
    )


def is_watch_history_expired(error: BaseException) -> bool:
    """Reason WATCH_HISTORY_EXPIRED: re-read the plan and watch after its version."""
    return _reason_in(error, "WATCH_HISTORY_EXPIRED")


def is_watch_too_slow(error: BaseException) -> bool:
    """Reason WATCH_TOO_SLOW (``metadata["resume_after_version"]`` says where to resume)."""
    return _reason_in(error, "WATCH_TOO_SLOW")


def is_history_unavailable(error: BaseException) -> bool:
    """Reason HISTORY_UNAVAILABLE: the content at the version given (GetPlanChanges' since_version, a
    merge's expected_version) can no longer be derived; read the whole plan
    (``history_unavailable_of`` has the versions)."""
    return _reason_in(error, "HISTORY_UNAVAILABLE")


def is_merge_conflict(error: BaseException) -> bool:
    """Reason MERGE_CONFLICT: a merge found your change and others' at the same lines and wrote
    nothing; read the changes since your version, redo your change, retry (``merge_conflict_of`` has
    the regions)."""
    return _reason_in(error, "MERGE_CONFLICT")


# The readers of 0.1, kept for callers that catch grpc.RpcError.

_M = TypeVar("_M", bound=Message)


def _details(error: BaseException, message_type: Callable[[], _M]) -> Optional[_M]:
    if not isinstance(error, grpc.RpcError):
        return None
    trailing: Metadata = tuple(_call(error, "trailing_metadata", None) or ())
    for detail in _status_details(trailing):
        message = message_type()
        if detail.Is(message.DESCRIPTOR):
            detail.Unpack(message)
            return message
    return None


def error_info(error: BaseException) -> Optional[error_details_pb2.ErrorInfo]:
    """The google.rpc.ErrorInfo a failed call carried, or None."""
    return _details(error, error_details_pb2.ErrorInfo)


def reason(error: BaseException) -> Optional[str]:
    """ErrorInfo.reason ("VERSION_MISMATCH", ...), or None. Branch on it, never on the message."""
    info = error_info(error)
    return info.reason if info is not None else None


def next_action(error: BaseException) -> Optional[str]:
    """ErrorInfo.metadata["next_action"]: what the server says to do next, or None."""
    info = error_info(error)
    return info.metadata.get("next_action") if info is not None else None


def field_violations(error: BaseException) -> List[error_details_pb2.BadRequest.FieldViolation]:
    """The google.rpc.BadRequest field violations of an INVALID_FIELD error (empty when none)."""
    bad_request = _details(error, error_details_pb2.BadRequest)
    return list(bad_request.field_violations) if bad_request is not None else []


__all__ = [
    "ERROR_DOMAIN",
    "Code",
    "TaskPlansError",
    "as_error",
    "is_version_mismatch",
    "is_not_found",
    "is_already_exists",
    "is_auth_error",
    "is_invalid_argument",
    "is_precondition_failed",
    "is_rate_limited",
    "is_retriable",
    "is_watch_history_expired",
    "is_watch_too_slow",
    "is_history_unavailable",
    "is_merge_conflict",
    "error_info",
    "reason",
    "next_action",
    "field_violations",
]
