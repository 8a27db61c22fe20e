"""The one client interceptor of a dialled channel: tokens, deadlines, retries and typed errors."""

from __future__ import annotations

import random as _random
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple, Union

import grpc

from taskplans.errors import Metadata, TaskPlansError, is_retriable
from taskplans.retry import REQUEST_ID_METHODS, RETRIED_METHODS, RetryPolicy

TokenProvider = Callable[[], str]

if TYPE_CHECKING:
    _Future = grpc.Future[Any]
else:
    _Future = grpc.Future


class _CallDetails(grpc.ClientCallDetails):
    def __init__(self, details: grpc.ClientCallDetails, timeout: Optional[float], metadata: Metadata) -> None:
        self.method = details.method
        self.timeout = timeout
        self.metadata = metadata
        self.credentials = details.credentials
        self.wait_for_ready = details.wait_for_ready
        self.compression = details.compression


class _FailedCall(grpc.Call, _Future):
    """The outcome of a call that failed with a typed error: a finished Call and Future whose
    result raises it (what the interceptor API expects in place of the failed call), and, for a
    stream, an iterator that raises it."""

    def __init__(self, error: TaskPlansError) -> None:
        self._error = error

    def result(self, timeout: Optional[float] = None) -> Any:
        raise self._error

    def exception(self, timeout: Optional[float] = None) -> Optional[Exception]:
        return self._error

    def traceback(self, timeout: Optional[float] = None) -> Any:
        return self._error.__traceback__

    def add_done_callback(self, fn: Callable[[Any], object]) -> None:
        fn(self)

    def done(self) -> bool:
        return True

    def cancelled(self) -> bool:
        return False

    def running(self) -> bool:
        return False

    def cancel(self) -> bool:
        return False

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float:
        return 0.0

    def add_callback(self, callback: Callable[[], None]) -> bool:
        return False

    def code(self) -> grpc.StatusCode:
        return self._error.status_code

    def details(self) -> str:
        return self._error.message

    def initial_metadata(self) -> Metadata:
        return self._error.initial_metadata()

    def trailing_metadata(self) -> Metadata:
        return self._error.trailing_metadata()

    def __iter__(self) -> "_FailedCall":
        return self

    def __next__(self) -> Any:
        raise self._error


class _TypedStream:
    """A server stream whose errors are raised as TaskPlansError; everything else is the call's."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def __iter__(self) -> "_TypedStream":
        return self

    def __next__(self) -> Any:
        try:
            return next(self._call)
        except grpc.RpcError as error:
            raise TaskPlansError.from_rpc_error(error) from error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


def bearer(token: str) -> Tuple[str, str]:
    """The metadata entry that sends ``token``."""
    return ("authorization", f"Bearer {token}")


def has_authorization(metadata: Optional[Metadata]) -> bool:
    return any(key.lower() == "authorization" for key, _ in metadata or ())


class Interceptor(
    grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor, grpc.StreamUnaryClientInterceptor
):
    """Per unary call: the deadline (``default_timeout`` when the call gives none) over all
    attempts; the retry policy for the retried methods, with one request_id per logical call; the
    token (static or from the provider, called before every attempt) unless the call carries its
    own ``authorization``; typed errors. Per stream: the token and typed errors (no deadline)."""

    def __init__(
        self,
        token: Optional[str],
        token_provider: Optional[TokenProvider],
        retry: Optional[RetryPolicy],
        default_timeout: Optional[float],
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        random: Callable[[], float] = _random.random,
    ) -> None:
        if token is not None and token_provider is not None:
            raise ValueError("give token or token_provider, not both")
        self._token = token
        self._token_provider = token_provider
        self.retry = retry
        self._default_timeout = default_timeout or None
        self._sleep = sleep
        self._clock = clock
        self._random = random

    def _metadata(self, details: grpc.ClientCallDetails) -> Metadata:
        metadata: List[Tuple[str, Union[str, bytes]]] = list(details.metadata or ())
        if has_authorization(details.metadata):  # a per-call token or authorization wins
            return tuple(metadata)
        token: Optional[str] = self._token
        if self._token_provider is not None:
            try:
                token = self._token_provider()
            except Exception as failure:
                error = TaskPlansError(grpc.StatusCode.UNAUTHENTICATED, f"the token provider failed: {failure}")
                raise error from failure
        if token:
            metadata.append(bearer(token))
        return tuple(metadata)

    def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.ClientCallDetails, Any], Any],
        client_call_details: grpc.ClientCallDetails,
        request: Any,
    ) -> Any:
        timeout = client_call_details.timeout if client_call_details.timeout is not None else self._default_timeout
        started = self._clock()
        deadline = None if timeout is None else started + timeout
        method = client_call_details.method
        method = method.decode() if isinstance(method, bytes) else method
        policy = self.retry if method in RETRIED_METHODS else None
        if policy is not None and method in REQUEST_ID_METHODS and not request.request_id:
            request = _with_request_id(request)
        failures = 0
        while True:
            try:
                metadata = self._metadata(client_call_details)
            except TaskPlansError as error:
                return _FailedCall(error)
            remaining = None if deadline is None else deadline - self._clock()
            outcome = continuation(_CallDetails(client_call_details, remaining, metadata), request)
            failure = outcome.exception()
            if failure is None:
                return outcome
            if not isinstance(failure, grpc.RpcError):
                return outcome  # not a call's failure (a serialization error): as gRPC raises it
            typed = TaskPlansError.from_rpc_error(failure)
            failures += 1
            if policy is None or failures >= policy.max_attempts or not is_retriable(typed):
                return _FailedCall(typed)
            delay = policy.delay(failures, typed.retry_delay, self._random())
            wake = self._clock() + delay
            if wake - started > policy.max_elapsed or (deadline is not None and wake >= deadline):
                return _FailedCall(typed)
            self._sleep(delay)

    def intercept_unary_stream(
        self,
        continuation: Callable[[grpc.ClientCallDetails, Any], Any],
        client_call_details: grpc.ClientCallDetails,
        request: Any,
    ) -> Any:
        try:
            metadata = self._metadata(client_call_details)
        except TaskPlansError as error:
            return _FailedCall(error)
        return _TypedStream(
            continuation(_CallDetails(client_call_details, client_call_details.timeout, metadata), request)
        )


    def intercept_stream_unary(
        self,
        continuation: Callable[[grpc.ClientCallDetails, Any], Any],
        client_call_details: grpc.ClientCallDetails,
        request_iterator: Any,
    ) -> Any:
        """ImportTask (a client stream): the token, the deadline (``default_timeout`` when the call
        gives none) and typed errors; not retried (its requests are read once: run the import again,
        it is idempotent)."""
        try:
            metadata = self._metadata(client_call_details)
        except TaskPlansError as error:
            return _FailedCall(error)
        timeout = client_call_details.timeout if client_call_details.timeout is not None else self._default_timeout
        outcome = continuation(_CallDetails(client_call_details, timeout, metadata), request_iterator)
        failure = outcome.exception()
        if isinstance(failure, grpc.RpcError):
            return _FailedCall(TaskPlansError.from_rpc_error(failure))
        return outcome


def _with_request_id(request: Any) -> Any:
    """A copy of ``request`` with a random request_id (the caller's message is left as it was)."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.request_id = str(uuid.uuid4())
    return copy
