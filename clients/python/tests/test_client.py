"""Tests of the Python client against a live server.

The repository's test command (test/integration/clients/clients.test.ts) starts one and sets
TASKPLANS_TEST_TARGET and TASKPLANS_TEST_TOKEN.
"""

import os
import time

import grpc
import pytest

from taskplans import TaskPlansError, errors, history_unavailable_of, merge_conflict_of
from taskplans.client import dial
from taskplans.v1 import plan_pb2, plan_service_pb2 as ps, task_pb2


@pytest.fixture
def client():
    target = os.environ.get("TASKPLANS_TEST_TARGET")
    if not target:
        pytest.fail("TASKPLANS_TEST_TARGET is not set: these tests need a live server; run them through npm test")
    with dial(target, token=os.environ.get("TASKPLANS_TEST_TOKEN")) as c:
        yield c


@pytest.fixture
def task(client):
    task_id = f"py-test-{time.time_ns()}"
    client.tasks.CreateTask(task_pb2.CreateTaskRequest(task_id=task_id, workspace_id="ws-conformance"), timeout=10)
    return task_id


def test_reasons_of_a_rejected_write(client, task):
    created = client.plans.CreatePlan(ps.CreatePlanRequest(task_id=task, content="# Plan\n"), timeout=10)
    with pytest.raises(grpc.RpcError) as failure:
        client.plans.UpdatePlan(ps.UpdatePlanRequest(
            task_id=task, mode=plan_pb2.WRITE_MODE_REPLACE, content="# Other\n",
            expected_version=created.plan.version + 1), timeout=10)
    error = failure.value
    assert error.code() == grpc.StatusCode.ABORTED
    assert errors.reason(error) == "VERSION_MISMATCH"
    assert errors.error_info(error).domain == errors.ERROR_DOMAIN
    assert errors.next_action(error)
    plan = client.plans.GetPlan(ps.GetPlanRequest(task_id=task), timeout=10).plan
    assert (plan.content, plan.version) == ("# Plan\n", 1)


def test_field_violations(client):
    with pytest.raises(grpc.RpcError) as failure:
        client.plans.GetPlan(ps.GetPlanRequest(task_id=""), timeout=10)
    assert errors.reason(failure.value) == "INVALID_FIELD"
    assert [v.field for v in errors.field_violations(failure.value)] == ["task_id"]


def test_retried_write_with_request_id_writes_once(client, task):
    client.plans.CreatePlan(ps.CreatePlanRequest(task_id=task, content="# Plan\n"), timeout=10)
    request = ps.UpdatePlanRequest(task_id=task, mode=plan_pb2.WRITE_MODE_APPEND, content="- once\n",
                                   request_id=f"{task}-r1")
    first = client.plans.UpdatePlan(request, timeout=10)
    again = client.plans.UpdatePlan(request, timeout=10)
    assert again.plan.version == first.plan.version
    assert client.plans.GetPlan(ps.GetPlanRequest(task_id=task), timeout=10).plan.content == "# Plan\n\n- once\n"


def test_deadline_and_errors_without_details(client, task):
    client.plans.CreatePlan(ps.CreatePlanRequest(task_id=task, content="# Plan\n"), timeout=10)
    # A watch past the newest version has nothing to send, so its deadline always passes first (a
    # unary call with timeout=0 races the server's answer).
    call = client.plans.WatchPlan(ps.WatchPlanRequest(task_id=task, after_version=1), timeout=0.3)
    with pytest.raises(grpc.RpcError) as failure:
        next(iter(call))
    assert failure.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert errors.reason(failure.value) is None
    assert errors.reason(ValueError("plain")) is None
    assert errors.field_violations(ValueError("plain")) == []


def test_a_per_call_token_wins_over_the_channel_token(client):
    with pytest.raises(grpc.RpcError) as failure:
        client.plans.GetPlan(ps.GetPlanRequest(task_id="any"), timeout=10,
                             metadata=(("authorization", "Bearer not-a-token"),))
    assert errors.reason(failure.value) == "TOKEN_INVALID"


def test_watch_plan_streams_changes_with_the_token(client, task):
    """Server streams carry the bearer token too (on a plaintext channel through the interceptor)."""
    client.plans.CreatePlan(ps.CreatePlanRequest(task_id=task, content="# Plan\n"), timeout=10)
    call = client.plans.WatchPlan(ps.WatchPlanRequest(task_id=task, after_version=0, include_content=True),
                                  timeout=10)
    try:
        first = next(iter(call))
    finally:
        call.cancel()
    assert first.kind == ps.PLAN_CHANGE_KIND_CREATED
    assert (first.plan.version, first.plan.content) == (1, "# Plan\n")


def test_changes_since_a_version_and_a_merged_edit(client, task):
    read = client.create_plan(ps.CreatePlanRequest(task_id=task, content="# Plan\n\n- [ ] a\n- b\n- c\n- [ ] d\n"),
                              timeout=10).plan.version
    client.save_plan(ps.SavePlanRequest(task_id=task, content="# Plan\n\n- [x] a\n- b\n- c\n- [ ] d\n"), timeout=10)
    changes = client.get_plan_changes(ps.GetPlanChangesRequest(task_id=task, since_version=read), timeout=10)
    assert (changes.plan.version, changes.plan.content, len(changes.changes)) == (read + 1, "", 1)
    assert "\n+- [x] a\n" in changes.diff.unified_diff
    merged = client.edit_plan(ps.EditPlanRequest(task_id=task, expected_version=read, old_text="- [ ] d",
                                                 new_text="- [x] d", merge=True), timeout=10)
    assert (merged.merge.from_version, merged.merge.to_version) == (read, read + 1)
    with pytest.raises(TaskPlansError) as conflict:
        client.edit_plan(ps.EditPlanRequest(task_id=task, expected_version=read, old_text="- [ ] a",
                                            new_text="- [ ] a, again", merge=True), timeout=10)
    typed = merge_conflict_of(conflict.value)
    assert typed is not None and (typed.base_version, typed.current_version) == (read, read + 2)
    assert "<<<<<<< yours" in typed.conflicts
    with pytest.raises(TaskPlansError) as ahead:
        client.get_plan_changes(ps.GetPlanChangesRequest(task_id=task, since_version=100), timeout=10)
    history = history_unavailable_of(ahead.value)
    assert history is not None and (history.version, history.current_version) == (100, read + 2)
    plan = client.get_plan(ps.GetPlanRequest(task_id=task), timeout=10).plan
    assert plan.content == "# Plan\n\n- [x] a\n- b\n- c\n- [x] d\n"
