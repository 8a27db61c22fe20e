"""Keeps notes in a task's plan: creates the task and plan when missing, appends a line, edits it
after a version mismatch, and follows the plan's changes for a few seconds.

    TASKPLANS_TARGET=127.0.0.1:50051 TASKPLANS_TOKEN=... python plan_notes.py my-task

Type-checked with ``mypy --strict`` (devtests/test_typing.py), so it also shows what the package's
types say.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import List, Optional

import grpc

import taskplans
from taskplans import RetryPolicy, TaskPlansError, Watch, dial
from taskplans.v1 import plan_pb2, plan_service_pb2, task_pb2


def token_from_file(path: str) -> taskplans.TokenProvider:
    """A provider reading the token a sidecar keeps fresh in a file; called before every attempt."""

    def provider() -> str:
        with open(path, encoding="utf-8") as file:
            return file.read().strip()

    return provider


def ensure_plan(client: taskplans.Client, task_id: str) -> int:
    """The plan's version, creating the task and the plan when they are missing."""
    try:
        client.create_task(task_pb2.CreateTaskRequest(task_id=task_id, workspace_id="ws-notes", title="Notes"))
    except TaskPlansError as error:
        if not taskplans.is_already_exists(error):
            raise
    try:
        return client.get_plan(plan_service_pb2.GetPlanRequest(task_id=task_id)).plan.version
    except TaskPlansError as error:
        if not taskplans.is_not_found(error):
            raise
    # No request_id: the client sets one, so a retried create is applied once.
    created = client.create_plan(plan_service_pb2.CreatePlanRequest(task_id=task_id, content="# Notes\n"))
    return created.plan.version


def append_note(client: taskplans.Client, task_id: str, note: str) -> plan_service_pb2.WritePlanResponse:
    request = plan_service_pb2.UpdatePlanRequest(
        task_id=task_id, mode=plan_pb2.WRITE_MODE_APPEND, content=f"- {note}\n"
    )
    return client.update_plan(request, timeout=5.0)


def replace_last_line(client: taskplans.Client, task_id: str, text: str) -> Optional[int]:
    """Replaces the plan's last line, reading again after a version mismatch; the new version."""
    for _ in range(3):
        plan = client.get_plan(plan_service_pb2.GetPlanRequest(task_id=task_id)).plan
        lines = plan.content.rstrip("\n").split("\n")
        try:
            written = client.edit_plan(
                plan_service_pb2.EditPlanRequest(
                    task_id=task_id, expected_version=plan.version, old_text=lines[-1], new_text=text
                )
            )
        except TaskPlansError as error:
            if taskplans.is_version_mismatch(error):
                continue  # someone wrote in between: read again, decide again
            if taskplans.is_precondition_failed(error):
                print(f"not edited: {error.reason} {error.next_action or ''}", file=sys.stderr)
                return None
            raise
        return written.plan.version
    return None


def follow(client: taskplans.Client, task_id: str, after_version: int, seconds: float) -> List[str]:
    """The changes after ``after_version`` for ``seconds``; the watch resumes across restarts."""
    seen: List[str] = []
    watch: Watch = client.watch(task_id, after_version=after_version)
    stop = threading.Timer(seconds, watch.cancel)
    stop.start()
    try:
        for change in watch:
            kind = plan_service_pb2.PlanChangeKind.Name(change.kind)
            seen.append(f"{kind} v{change.plan.version}")
    except TaskPlansError as error:
        if taskplans.is_watch_too_slow(error):
            resume = error.metadata.get("resume_after_version", "")
            seen.append(f"too slow; resume after {resume}")
        elif taskplans.is_watch_history_expired(error):
            seen.append("history expired; read the plan again")
        else:
            raise
    finally:
        stop.cancel()
        watch.cancel()
    return seen


def describe(error: TaskPlansError) -> str:
    status: grpc.StatusCode = error.code()  # grpc.RpcError's accessor still works
    name: str = error.code
    delay = f" retry in {error.retry_delay:.1f}s" if error.retry_delay is not None else ""
    violations = ", ".join(f"{field}: {description}" for field, description in error.field_violations)
    return f"{name} ({status.value[0]}) {error.reason or '-'} {error.message}{delay} {violations}".rstrip()


def main(argv: List[str]) -> int:
    task_id = argv[1] if len(argv) > 1 else "notes-example"
    target = os.environ.get("TASKPLANS_TARGET", "127.0.0.1:50051")
    token_file = os.environ.get("TASKPLANS_TOKEN_FILE")
    ca_file = os.environ.get("TASKPLANS_TLS_CA")
    tls = taskplans.TLS(ca_file=ca_file) if ca_file else None
    retry = RetryPolicy(max_attempts=4, max_elapsed=10.0)
    if token_file:
        client = dial(target, tls=tls, token_provider=token_from_file(token_file), retry=retry)
    else:
        client = dial(target, token=os.environ.get("TASKPLANS_TOKEN"), tls=tls, retry=retry, default_timeout=10.0)
    with client:
        try:
            version = ensure_plan(client, task_id)
            appended = append_note(client, task_id, "a note from the example")
            print(f"appended: version {appended.plan.version}, revision {appended.revision.number}")
            print(f"edited: version {replace_last_line(client, task_id, '- an edited note')}")
            for line in follow(client, task_id, version, seconds=2.0):
                print(line)
        except TaskPlansError as error:
            print(describe(error), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
