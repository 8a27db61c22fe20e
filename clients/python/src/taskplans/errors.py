"""Readers of the rich error model (google.rpc.Status in the grpc-status-details-bin trailer)."""

from __future__ import annotations

from typing import List, Optional

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

ERROR_DOMAIN = "taskplans"


def _details(error: BaseException, message_type):  # type: ignore[no-untyped-def]
    if not isinstance(error, grpc.Call):
        return None
    status = rpc_status.from_call(error)
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(message_type.DESCRIPTOR):
            message = message_type()
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
