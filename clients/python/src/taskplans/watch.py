"""``Client.watch()``: a plan's changes, resumed after the last one on a retriable error."""

from __future__ import annotations

import random as _random
import threading
import time
from typing import Any, Callable, Iterator, Optional

import grpc

from taskplans.errors import TaskPlansError, is_retriable
from taskplans.retry import RetryPolicy
from taskplans.v1.plan_service_pb2 import PlanChange

#: Opens the stream after a version (None: from a snapshot).
OpenStream = Callable[[Optional[int]], Any]


class Watch(Iterator[PlanChange]):
    """An iterator of a plan's changes (clients/SDK.md, "watch()").

    A SNAPSHOT first when no ``after_version`` was given, then every change. On a retriable error
    (UNAVAILABLE of any reason, WATCH_DRAINING included) it reopens the stream after the last version
    it yielded, with the retry policy's backoff; the attempt count starts again after every change.
    Every other error (WATCH_HISTORY_EXPIRED, WATCH_TOO_SLOW, TASK_NOT_FOUND, auth errors, ...) is
    raised as a TaskPlansError and ends the watch. ``cancel()`` (from any thread, or leaving a
    ``with`` block) ends the iteration with no error.
    """

    def __init__(
        self,
        open_stream: OpenStream,
        after_version: Optional[int],
        retry: Optional[RetryPolicy],
        clock: Callable[[], float] = time.monotonic,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self._open_stream = open_stream
        self._after_version = after_version
        self._retry = retry
        self._clock = clock
        self._random = random
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._ended = False
        self._call: Any = None

    @property
    def after_version(self) -> Optional[int]:
        """The version a reopened stream resumes after: the last one yielded (or the caller's)."""
        return self._after_version

    def cancel(self) -> None:
        """Ends the watch: the iteration stops with no error, now or at its next change."""
        self._cancelled.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    close = cancel

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *_: object) -> None:
        self.cancel()

    def __iter__(self) -> "Watch":
        return self

    def __next__(self) -> PlanChange:
        failures = 0
        first_failure = 0.0
        while True:
            if self._ended or self._cancelled.is_set():
                self._end()
                raise StopIteration
            call = self._current()
            try:
                change: PlanChange = next(call)
            except StopIteration:
                self._end()  # the server ended the stream (it does not while the task exists)
                raise
            except grpc.RpcError as raw:
                if self._cancelled.is_set():
                    self._end()
                    raise StopIteration from None
                error = TaskPlansError.from_rpc_error(raw)
                with self._lock:
                    self._call = None
                policy = self._retry
                failures += 1
                if failures == 1:
                    first_failure = self._clock()
                if policy is None or failures >= policy.max_attempts or not is_retriable(error):
                    self._end()
                    raise error from None
                delay = policy.delay(failures, error.retry_delay, self._random())
                if self._clock() + delay - first_failure > policy.max_elapsed:
                    self._end()
                    raise error from None
                self._cancelled.wait(delay)  # a cancel wakes it; the loop then ends the watch
                continue
            if change.HasField("plan"):
                self._after_version = change.plan.version
            return change

    def _current(self) -> Any:
        with self._lock:
            if self._call is None:
                self._call = self._open_stream(self._after_version)
            call = self._call
        if self._cancelled.is_set():
            call.cancel()
        return call

    def _end(self) -> None:
        self._ended = True
        with self._lock:
            call, self._call = self._call, None
        if call is not None:
            call.cancel()
