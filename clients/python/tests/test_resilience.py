"""Retries, deadlines, tokens, typed errors and watch resume, against a scripted fake server.

The fake is a real grpc.server on a loopback port implementing PlanServiceServicer, answering each
call from a script (a response, or a status with rich details) and recording what it received. It
tests the client's logic only; test_client.py runs the client against the real service.
"""

from __future__ import annotations

import threading
import time
from concurrent import futures
from typing import Any, Callable, Dict, List, Optional, Tuple

import grpc
import pytest
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

import taskplans
from taskplans import RetryPolicy, TaskPlansError, dial
from taskplans.v1 import plan_pb2, plan_service_pb2 as ps, plan_service_pb2_grpc

FAST = RetryPolicy(initial_backoff=0.01, max_backoff=0.05)


def status(code: grpc.StatusCode, message: str, reason: Optional[str] = None,
           metadata: Optional[Dict[str, str]] = None, retry_delay: Optional[float] = None,
           violations: Tuple[Tuple[str, str], ...] = ()) -> grpc.Status:
    details = []
    if reason is not None:
        info = error_details_pb2.ErrorInfo(reason=reason, domain="taskplans", metadata=metadata or {})
        details.append(info)
    if violations:
        details.append(error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=f, description=d) for f, d in violations]))
    if retry_delay is not None:
        seconds = int(retry_delay)
        details.append(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(
            seconds=seconds, nanos=int(round((retry_delay - seconds) * 1e9)))))
    packed = []
    for detail in details:
        holder = any_pb2.Any()
        holder.Pack(detail)
        packed.append(holder)
    return rpc_status.to_status(status_pb2.Status(code=code.value[0], message=message, details=packed))


UNAVAILABLE = status(grpc.StatusCode.UNAVAILABLE, "replica restarting", "STORAGE_UNAVAILABLE")
RATE_LIMITED = status(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down", "RATE_LIMITED", retry_delay=0.3)
WRITE_BUDGET_EXCEEDED = status(grpc.StatusCode.RESOURCE_EXHAUSTED, "stored too much", "WRITE_BUDGET_EXCEEDED",
                               retry_delay=0.3)
EXPENSIVE_CALLS_LIMITED = status(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many diffs", "EXPENSIVE_CALLS_LIMITED",
                                 retry_delay=0.3)
WRITE_CONFLICT = status(grpc.StatusCode.ABORTED, "conflict", "WRITE_CONFLICT")
VERSION_MISMATCH = status(grpc.StatusCode.ABORTED, "the plan is at version 3", "VERSION_MISMATCH",
                          {"next_action": "read the plan again", "current_version": "3", "request_id": "r-1"})


def plan_response(version: int) -> ps.GetPlanResponse:
    return ps.GetPlanResponse(plan=plan_pb2.Plan(task_id="t", version=version, content="# Plan\n"))


def written(version: int) -> ps.WritePlanResponse:
    return ps.WritePlanResponse(plan=plan_pb2.Plan(task_id="t", version=version))


def change(kind: int, version: int) -> ps.PlanChange:
    return ps.PlanChange(kind=kind, plan=plan_pb2.Plan(task_id="t", version=version))


class Received:
    def __init__(self, request: Any, context: grpc.ServicerContext) -> None:
        self.request = request
        self.metadata = dict(context.invocation_metadata())
        self.at = time.monotonic()
        self.time_remaining = context.time_remaining()


class Scripted(plan_service_pb2_grpc.PlanServiceServicer):
    """Answers each method's calls in turn from ``script[method]``: a response message, a
    grpc.Status to fail with, or a callable (request, context) -> response. The last entry repeats.
    WatchPlan's entries are lists (one per stream) of changes, then optionally a grpc.Status that
    ends the stream; a stream without a final status stays open until the client cancels."""

    def __init__(self) -> None:
        self.script: Dict[str, List[Any]] = {}
        self.calls: Dict[str, List[Received]] = {}
        self.lock = threading.Lock()

    def _next(self, method: str, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.calls.setdefault(method, []).append(Received(request, context))
            entries = self.script.get(method, [])
            if not entries:
                context.abort(grpc.StatusCode.UNIMPLEMENTED, f"no script for {method}")
            entry = entries.pop(0) if len(entries) > 1 else entries[0]
        return entry

    def _unary(self, method: str, request: Any, context: grpc.ServicerContext) -> Any:
        entry = self._next(method, request, context)
        if callable(entry):
            entry = entry(request, context)
        if isinstance(entry, grpc.Status):
            context.abort_with_status(entry)
        return entry

    def GetPlan(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._unary("GetPlan", request, context)

    def UpdatePlan(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._unary("UpdatePlan", request, context)

    def CreatePlan(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._unary("CreatePlan", request, context)

    def EditPlan(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._unary("EditPlan", request, context)

    def GetPlanChanges(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._unary("GetPlanChanges", request, context)

    def DiffPlanRevisions(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._unary("DiffPlanRevisions", request, context)

    def SavePlan(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._unary("SavePlan", request, context)

    def WatchPlan(self, request: Any, context: grpc.ServicerContext) -> Any:
        stream = list(self._next("WatchPlan", request, context))
        ending = stream.pop() if stream and isinstance(stream[-1], grpc.Status) else None
        for item in stream:
            yield item
        if ending is not None:
            context.abort_with_status(ending)
        done = threading.Event()
        context.add_callback(done.set)
        done.wait(10)


@pytest.fixture
def fake():
    servicer = Scripted()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    plan_service_pb2_grpc.add_PlanServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    servicer.target = f"127.0.0.1:{port}"
    yield servicer
    server.stop(0)


def connect(fake: Scripted, **options: Any) -> taskplans.Client:
    options.setdefault("retry", FAST)
    return dial(fake.target, **options)


# Which errors are retried, how often, how long apart.


def test_unavailable_is_retried_until_an_answer(fake):
    fake.script["GetPlan"] = [UNAVAILABLE, status(grpc.StatusCode.UNAVAILABLE, "no reason"), plan_response(4)]
    with connect(fake) as client:
        assert client.get_plan(ps.GetPlanRequest(task_id="t")).plan.version == 4
        assert len(fake.calls["GetPlan"]) == 3


@pytest.mark.parametrize("refusal", [RATE_LIMITED, WRITE_BUDGET_EXCEEDED, EXPENSIVE_CALLS_LIMITED],
                         ids=["RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "EXPENSIVE_CALLS_LIMITED"])
def test_rate_limited_waits_at_least_the_retry_info_delay(fake, refusal):
    fake.script["GetPlan"] = [refusal, plan_response(1)]
    with connect(fake) as client:
        assert client.plans.GetPlan(ps.GetPlanRequest(task_id="t")).plan.version == 1
    first, second = fake.calls["GetPlan"]
    assert second.at - first.at >= 0.3  # the backoff alone would be 10 ms


def test_a_write_conflict_is_retried_with_the_same_request_id_on_every_attempt(fake):
    fake.script["UpdatePlan"] = [WRITE_CONFLICT, UNAVAILABLE, written(5)]
    request = ps.UpdatePlanRequest(task_id="t", mode=plan_pb2.WRITE_MODE_APPEND, content="- x\n")
    with connect(fake) as client:
        assert client.update_plan(request).plan.version == 5
    ids = [call.request.request_id for call in fake.calls["UpdatePlan"]]
    assert len(ids) == 3 and len(set(ids)) == 1
    assert len(ids[0]) == 36  # a UUID
    assert not request.HasField("request_id")  # the caller's message is left as it was


def test_each_logical_call_gets_its_own_request_id_and_a_given_one_is_kept(fake):
    fake.script["CreatePlan"] = [written(1)]
    with connect(fake) as client:
        client.create_plan(ps.CreatePlanRequest(task_id="t", content="# A\n"))
        client.create_plan(ps.CreatePlanRequest(task_id="t", content="# A\n"))
        client.create_plan(ps.CreatePlanRequest(task_id="t", content="# A\n", request_id="mine"))
    ids = [call.request.request_id for call in fake.calls["CreatePlan"]]
    assert ids[0] != ids[1] and ids[2] == "mine"


def test_version_mismatch_is_not_retried_and_is_typed(fake):
    fake.script["UpdatePlan"] = [VERSION_MISMATCH]
    with connect(fake) as client, pytest.raises(TaskPlansError) as failure:
        client.update_plan(ps.UpdatePlanRequest(task_id="t", mode=plan_pb2.WRITE_MODE_REPLACE,
                                                content="# B\n", expected_version=2))
    assert len(fake.calls["UpdatePlan"]) == 1
    error = failure.value
    assert isinstance(error, grpc.RpcError)
    assert (error.code, error.code(), error.reason) == ("ABORTED", grpc.StatusCode.ABORTED, "VERSION_MISMATCH")
    assert error.metadata == {"next_action": "read the plan again", "current_version": "3", "request_id": "r-1"}
    assert error.next_action == "read the plan again"
    assert (error.message, error.details(), error.retry_delay, error.field_violations) == (
        "the plan is at version 3", "the plan is at version 3", None, [])
    assert taskplans.is_version_mismatch(error) and not taskplans.is_retriable(error)
    # The 0.1 readers and grpc_status keep working on it.
    assert taskplans.errors.reason(error) == "VERSION_MISMATCH"
    assert rpc_status.from_call(error).message == "the plan is at version 3"


def test_field_violations_and_retry_delay_are_read(fake):
    fake.script["GetPlan"] = [status(grpc.StatusCode.INVALID_ARGUMENT, "bad task_id", "INVALID_FIELD",
                                     violations=(("task_id", "required"), ("limit", "too big")))]
    with connect(fake) as client, pytest.raises(TaskPlansError) as failure:
        client.get_plan(ps.GetPlanRequest(task_id=""))
    assert failure.value.field_violations == [("task_id", "required"), ("limit", "too big")]
    assert taskplans.is_invalid_argument(failure.value)
    fake.script["GetPlan"] = [RATE_LIMITED]
    with connect(fake, retry=None) as client, pytest.raises(TaskPlansError) as failure:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    assert failure.value.retry_delay == pytest.approx(0.3)
    assert taskplans.is_rate_limited(failure.value) and taskplans.is_retriable(failure.value)


def test_plan_changes_and_revision_diffs_are_retried_as_reads(fake):
    fake.script["GetPlanChanges"] = [UNAVAILABLE, ps.GetPlanChangesResponse(
        plan=plan_pb2.Plan(task_id="t", version=3), since_version=1, diff=ps.PlanDiff(diff_bytes=40))]
    fake.script["DiffPlanRevisions"] = [WRITE_CONFLICT, ps.DiffPlanRevisionsResponse(diff=ps.PlanDiff(lines_added=1))]
    with connect(fake) as client:
        changes = client.get_plan_changes(ps.GetPlanChangesRequest(task_id="t", since_version=1))
        diff = client.diff_plan_revisions(ps.DiffPlanRevisionsRequest(task_id="t", from_revision_id="a",
                                                                      to_revision_id="b"))
    assert (changes.plan.version, changes.diff.diff_bytes, diff.diff.lines_added) == (3, 40, 1)
    assert [call.request.since_version for call in fake.calls["GetPlanChanges"]] == [1, 1]
    assert len(fake.calls["DiffPlanRevisions"]) == 2


def test_a_merged_edit_keeps_one_request_id_and_its_merge_flag_on_every_attempt(fake):
    merged = ps.WritePlanResponse(plan=plan_pb2.Plan(task_id="t", version=5),
                                  merge=plan_pb2.MergeMarker(from_version=2, to_version=4))
    fake.script["EditPlan"] = [UNAVAILABLE, merged]
    with connect(fake) as client:
        answer = client.edit_plan(ps.EditPlanRequest(task_id="t", expected_version=2, old_text="a", new_text="b",
                                                     merge=True))
    assert (answer.merge.from_version, answer.merge.to_version) == (2, 4)
    attempts = [(call.request.request_id, call.request.merge) for call in fake.calls["EditPlan"]]
    assert len(attempts) == 2 and attempts[0] == attempts[1] and attempts[0][1] is True


@pytest.mark.parametrize("code, reason", [
    (grpc.StatusCode.ABORTED, "MERGE_CONFLICT"),
    (grpc.StatusCode.INVALID_ARGUMENT, "MERGE_NOT_APPLICABLE"),
    (grpc.StatusCode.OUT_OF_RANGE, "HISTORY_UNAVAILABLE"),
])
def test_merge_and_history_refusals_are_not_retried(fake, code, reason):
    fake.script["UpdatePlan"] = [status(code, "refused", reason), written(9)]
    with connect(fake) as client, pytest.raises(TaskPlansError) as failure:
        client.update_plan(ps.UpdatePlanRequest(task_id="t", content="# B\n", expected_version=2, merge=True))
    assert failure.value.reason == reason and len(fake.calls["UpdatePlan"]) == 1


def test_the_metadata_of_a_merge_conflict_and_of_unavailable_history_is_typed(fake):
    conflicts = "@@ base lines 3-3 @@\n<<<<<<< yours\n- b\n||||||| base\n- a\n=======\n- c\n>>>>>>> current\n"
    fake.script["EditPlan"] = [status(grpc.StatusCode.ABORTED, "conflict", "MERGE_CONFLICT", {
        "base_version": "4", "current_version": "6", "conflict_regions": "1", "conflicts": conflicts})]
    fake.script["GetPlanChanges"] = [status(grpc.StatusCode.OUT_OF_RANGE, "pruned", "HISTORY_UNAVAILABLE", {
        "since_version": "2", "current_version": "9", "oldest_version": "5"})]
    with connect(fake) as client:
        with pytest.raises(TaskPlansError) as conflict:
            client.edit_plan(ps.EditPlanRequest(task_id="t", expected_version=4, merge=True))
        with pytest.raises(TaskPlansError) as pruned:
            client.get_plan_changes(ps.GetPlanChangesRequest(task_id="t", since_version=2))
    assert taskplans.is_merge_conflict(conflict.value) and not taskplans.is_history_unavailable(conflict.value)
    assert taskplans.merge_conflict_of(conflict.value) == taskplans.MergeConflict(
        base_version=4, current_version=6, conflict_regions=1, conflicts=conflicts)
    assert taskplans.history_unavailable_of(conflict.value) is None
    assert taskplans.is_history_unavailable(pruned.value)
    assert taskplans.history_unavailable_of(pruned.value) == taskplans.HistoryUnavailable(
        version=2, current_version=9, oldest_version=5)
    merge = TaskPlansError(grpc.StatusCode.OUT_OF_RANGE, reason="HISTORY_UNAVAILABLE",
                           metadata={"expected_version": "2", "current_version": "9"})
    assert taskplans.history_unavailable_of(merge) == taskplans.HistoryUnavailable(2, 9, None)
    assert taskplans.merge_conflict_of(ValueError("MERGE_CONFLICT")) is None


def test_writes_without_a_request_id_are_not_retried(fake):
    fake.script["SavePlan"] = [UNAVAILABLE, written(2)]
    with connect(fake) as client, pytest.raises(TaskPlansError) as failure:
        client.save_plan(ps.SavePlanRequest(task_id="t", content="# C\n"))
    assert failure.value.code == "UNAVAILABLE" and failure.value.reason == "STORAGE_UNAVAILABLE"
    assert len(fake.calls["SavePlan"]) == 1


def test_attempts_are_bounded_by_the_default_policy(fake):
    fake.script["GetPlan"] = [UNAVAILABLE]
    started = time.monotonic()
    with dial(fake.target) as client, pytest.raises(TaskPlansError) as failure:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    elapsed = time.monotonic() - started
    assert failure.value.reason == "STORAGE_UNAVAILABLE"
    calls = fake.calls["GetPlan"]
    assert len(calls) == 7
    gaps = [b.at - a.at for a, b in zip(calls, calls[1:])]
    # 100 ms doubling, jitter 0.8-1.2: each gap is at least its backoff (a loaded machine only adds).
    for gap, base in zip(gaps, (0.1, 0.2, 0.4, 0.8, 1.6, 3.2)):
        assert base * 0.8 - 0.01 <= gap
    # At least 5 s in all: longer than a database restart (2.2 to 2.5 s measured).
    assert 5.0 <= elapsed < 15


def test_max_elapsed_bounds_the_retries(fake):
    fake.script["GetPlan"] = [UNAVAILABLE]
    policy = RetryPolicy(initial_backoff=0.1, multiplier=1, jitter=0, max_elapsed=0.25, max_attempts=100)
    with connect(fake, retry=policy) as client, pytest.raises(TaskPlansError):
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    # At 0, 0.1 and 0.2 s (a loaded machine may fit fewer); 0.3 s would pass 0.25 s; 100 without the bound.
    assert 1 <= len(fake.calls["GetPlan"]) <= 3


def test_retry_none_makes_one_attempt_and_sets_no_request_id(fake):
    fake.script["UpdatePlan"] = [UNAVAILABLE, written(2)]
    with connect(fake, retry=None) as client, pytest.raises(TaskPlansError):
        client.update_plan(ps.UpdatePlanRequest(task_id="t", mode=plan_pb2.WRITE_MODE_APPEND, content="- y\n"))
    assert len(fake.calls["UpdatePlan"]) == 1
    assert not fake.calls["UpdatePlan"][0].request.HasField("request_id")


def test_backoff_delays_jitter_cap_and_retry_info():
    policy = RetryPolicy()
    assert policy.delay(1, None, 0.0) == pytest.approx(0.08)
    assert policy.delay(1, None, 0.999999) == pytest.approx(0.12)
    assert policy.delay(3, None, 0.5) == pytest.approx(0.4)
    assert policy.delay(20, None, 0.5) == pytest.approx(5.0)  # max backoff
    assert policy.delay(1, 2.0, 0.5) == pytest.approx(2.0)  # at least RetryInfo's delay
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


# Deadlines.


def test_the_default_timeout_applies_when_the_call_gives_none(fake):
    fake.script["GetPlan"] = [plan_response(1)]
    with connect(fake, default_timeout=5.0) as client:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
        client.get_plan(ps.GetPlanRequest(task_id="t"), timeout=60)
    with connect(fake) as client:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    default, given, thirty = (call.time_remaining for call in fake.calls["GetPlan"])
    assert 4 < default < 5.5 and 55 < given < 60.5 and 29 < thirty < 30.5


def test_a_deadline_exceeded_is_raised_typed_without_a_reason(fake):
    fake.script["GetPlan"] = [lambda request, context: time.sleep(1) or plan_response(1)]
    with connect(fake, default_timeout=0.2) as client, pytest.raises(TaskPlansError) as failure:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    assert (failure.value.code, failure.value.reason, failure.value.next_action) == ("DEADLINE_EXCEEDED", None, None)
    assert len(fake.calls["GetPlan"]) == 1  # never retried


def test_the_deadline_covers_every_attempt_and_backoff(fake):
    fake.script["GetPlan"] = [status(grpc.StatusCode.UNAVAILABLE, "later", retry_delay=0.2)]
    started = time.monotonic()
    with connect(fake, default_timeout=0.5) as client, pytest.raises(TaskPlansError) as failure:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    assert time.monotonic() - started < 3
    # The last error, or the deadline when a loaded machine made the last attempt outlast it.
    assert failure.value.code in ("UNAVAILABLE", "DEADLINE_EXCEEDED")
    # At 0, 0.2 and 0.4 s at most; a deadline per attempt would allow all 5.
    assert 1 <= len(fake.calls["GetPlan"]) <= 3


# Tokens.


def test_a_static_token_is_sent(fake):
    fake.script["GetPlan"] = [plan_response(1)]
    with connect(fake, token="static") as client:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    assert fake.calls["GetPlan"][0].metadata["authorization"] == "Bearer static"


def test_the_token_provider_is_called_before_every_attempt(fake):
    fake.script["GetPlan"] = [UNAVAILABLE, plan_response(1)]
    issued: List[str] = []

    def provider() -> str:
        issued.append(f"token-{len(issued) + 1}")
        return issued[-1]

    with connect(fake, token_provider=provider) as client:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    assert [c.metadata["authorization"] for c in fake.calls["GetPlan"]] == ["Bearer token-1", "Bearer token-2"]


def test_a_per_call_token_or_authorization_wins_and_the_provider_is_not_called(fake):
    fake.script["GetPlan"] = [plan_response(1)]
    calls: List[int] = []

    def provider() -> str:
        calls.append(1)
        return "provided"

    with connect(fake, token_provider=provider) as client:
        client.get_plan(ps.GetPlanRequest(task_id="t"), token="override")
        client.plans.GetPlan(ps.GetPlanRequest(task_id="t"), metadata=(("authorization", "Bearer raw"),))
        client.get_plan(ps.GetPlanRequest(task_id="t"), token="wins", metadata=(("authorization", "Bearer no"),))
    assert calls == []
    sent = [c.metadata["authorization"] for c in fake.calls["GetPlan"]]
    assert sent == ["Bearer override", "Bearer raw", "Bearer wins"]


def test_a_failing_provider_fails_the_call_unauthenticated_and_is_not_retried(fake):
    fake.script["GetPlan"] = [plan_response(1)]

    def provider() -> str:
        raise RuntimeError("refresh failed")

    with connect(fake, token_provider=provider) as client, pytest.raises(TaskPlansError) as failure:
        client.get_plan(ps.GetPlanRequest(task_id="t"))
    assert (failure.value.code, failure.value.reason) == ("UNAUTHENTICATED", None)
    assert "refresh failed" in failure.value.message
    assert taskplans.is_auth_error(failure.value)
    assert "GetPlan" not in fake.calls
    with pytest.raises(ValueError):
        dial(fake.target, token="a", token_provider=provider)


# watch().


def test_watch_resumes_after_the_last_version_on_unavailable(fake):
    draining = status(grpc.StatusCode.UNAVAILABLE, "draining", "WATCH_DRAINING")
    fake.script["WatchPlan"] = [
        [change(ps.PLAN_CHANGE_KIND_SNAPSHOT, 3), change(ps.PLAN_CHANGE_KIND_UPDATED, 4), draining],
        [UNAVAILABLE],
        [change(ps.PLAN_CHANGE_KIND_UPDATED, 5)],
    ]
    with connect(fake, token="w") as client:
        watch = client.watch("t", include_content=True)
        got = [next(watch) for _ in range(3)]
        assert [(c.kind, c.plan.version) for c in got] == [
            (ps.PLAN_CHANGE_KIND_SNAPSHOT, 3), (ps.PLAN_CHANGE_KIND_UPDATED, 4), (ps.PLAN_CHANGE_KIND_UPDATED, 5)]
        watch.cancel()
        assert list(watch) == []
    requests = [call.request for call in fake.calls["WatchPlan"]]
    assert [r.after_version if r.HasField("after_version") else None for r in requests] == [None, 4, 4]
    assert all(r.include_content for r in requests)
    assert all(c.metadata["authorization"] == "Bearer w" for c in fake.calls["WatchPlan"])


def test_watch_counts_attempts_again_after_every_change(fake):
    # Seven streams in a row end UNAVAILABLE after one change each: as many as max_attempts (7).
    fake.script["WatchPlan"] = [[change(ps.PLAN_CHANGE_KIND_UPDATED, v), UNAVAILABLE] for v in range(1, 8)]
    fake.script["WatchPlan"].append([change(ps.PLAN_CHANGE_KIND_UPDATED, 8)])
    with connect(fake) as client, client.watch("t", after_version=0) as watch:
        assert [next(watch).plan.version for _ in range(8)] == list(range(1, 9))
    assert [c.request.after_version for c in fake.calls["WatchPlan"]] == list(range(0, 8))


def test_watch_gives_up_after_max_attempts_without_a_change(fake):
    fake.script["WatchPlan"] = [[UNAVAILABLE]]
    with connect(fake) as client, pytest.raises(TaskPlansError) as failure:
        next(client.watch("t", after_version=2))
    assert failure.value.reason == "STORAGE_UNAVAILABLE"
    assert len(fake.calls["WatchPlan"]) == FAST.max_attempts


@pytest.mark.parametrize("reason,code,check", [
    ("WATCH_HISTORY_EXPIRED", grpc.StatusCode.OUT_OF_RANGE, taskplans.is_watch_history_expired),
    ("WATCH_TOO_SLOW", grpc.StatusCode.RESOURCE_EXHAUSTED, taskplans.is_watch_too_slow),
    ("TASK_NOT_FOUND", grpc.StatusCode.NOT_FOUND, taskplans.is_not_found),
])
def test_watch_ends_with_the_typed_error(fake, reason: str, code: grpc.StatusCode, check: Callable[[BaseException], bool]):
    ending = status(code, "ended", reason, {"resume_after_version": "6"})
    fake.script["WatchPlan"] = [[change(ps.PLAN_CHANGE_KIND_UPDATED, 6), ending]]
    with connect(fake) as client:
        watch = client.watch("t", after_version=5)
        assert next(watch).plan.version == 6
        with pytest.raises(TaskPlansError) as failure:
            next(watch)
        assert list(watch) == []  # ended
    assert check(failure.value) and failure.value.metadata["resume_after_version"] == "6"
    assert len(fake.calls["WatchPlan"]) == 1


def test_watch_without_retries_ends_on_unavailable(fake):
    fake.script["WatchPlan"] = [[UNAVAILABLE]]
    with connect(fake, retry=None) as client, pytest.raises(TaskPlansError):
        next(client.watch("t"))
    assert len(fake.calls["WatchPlan"]) == 1


def test_cancel_from_another_thread_ends_a_waiting_watch_without_error(fake):
    fake.script["WatchPlan"] = [[change(ps.PLAN_CHANGE_KIND_SNAPSHOT, 1)]]
    with connect(fake) as client:
        watch = client.watch("t")
        assert next(watch).kind == ps.PLAN_CHANGE_KIND_SNAPSHOT
        timer = threading.Timer(0.2, watch.cancel)
        timer.start()
        started = time.monotonic()
        assert list(watch) == []
        assert time.monotonic() - started < 5
        timer.join()


def test_the_raw_stream_raises_typed_errors(fake):
    fake.script["WatchPlan"] = [[status(grpc.StatusCode.OUT_OF_RANGE, "ahead", "WATCH_HISTORY_EXPIRED")]]
    with connect(fake) as client:
        call = client.plans.WatchPlan(ps.WatchPlanRequest(task_id="t", after_version=100))
        with pytest.raises(TaskPlansError) as failure:
            next(iter(call))
    assert failure.value.reason == "WATCH_HISTORY_EXPIRED"


def test_helpers_take_any_error():
    for helper in (taskplans.is_version_mismatch, taskplans.is_not_found, taskplans.is_already_exists,
                   taskplans.is_auth_error, taskplans.is_invalid_argument, taskplans.is_precondition_failed,
                   taskplans.is_rate_limited, taskplans.is_retriable, taskplans.is_watch_history_expired,
                   taskplans.is_watch_too_slow, taskplans.is_history_unavailable, taskplans.is_merge_conflict):
        assert helper(ValueError("plain")) is False
    unreachable = TaskPlansError(grpc.StatusCode.PERMISSION_DENIED, "no", reason="TASK_NOT_REACHABLE")
    assert taskplans.is_auth_error(unreachable) and not taskplans.is_not_found(unreachable)
    assert taskplans.is_already_exists(TaskPlansError(grpc.StatusCode.ALREADY_EXISTS, reason="PLAN_EXISTS"))
    assert taskplans.is_precondition_failed(TaskPlansError(grpc.StatusCode.FAILED_PRECONDITION))
    assert not taskplans.is_retriable(TaskPlansError(grpc.StatusCode.ABORTED, reason="VERSION_MISMATCH"))
    assert not taskplans.is_retriable(TaskPlansError(grpc.StatusCode.DEADLINE_EXCEEDED))
    assert not taskplans.is_retriable(TaskPlansError(grpc.StatusCode.RESOURCE_EXHAUSTED, reason="WATCH_TOO_SLOW"))
    over_budget = TaskPlansError(grpc.StatusCode.RESOURCE_EXHAUSTED, reason="WRITE_BUDGET_EXCEEDED")
    assert taskplans.is_retriable(over_budget) and taskplans.is_rate_limited(over_budget)
    not_applicable = TaskPlansError(grpc.StatusCode.INVALID_ARGUMENT, reason="MERGE_NOT_APPLICABLE")
    assert taskplans.is_invalid_argument(not_applicable) and not taskplans.is_merge_conflict(not_applicable)


def test_closing_the_client_ends_its_watches_without_error(fake):
    fake.script["WatchPlan"] = [[change(ps.PLAN_CHANGE_KIND_SNAPSHOT, 1)]]
    client = connect(fake)
    watch = client.watch("t")
    assert next(watch).plan.version == 1
    threading.Timer(0.2, client.close).start()
    assert list(watch) == []
