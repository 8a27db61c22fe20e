"""The conformance scenario (clients/conformance/README.md) through the Python client.

Prints the canonical transcript on stdout, reading the test's answer from stdin after the three
resilience steps that wait for it. Environment: TASKPLANS_TARGET, TASKPLANS_FAILOVER_TARGET,
TASKPLANS_TASK_ID, TASKPLANS_TLS_* (optional: CA, CERT, KEY, SERVER_NAME), TASKPLANS_TOKEN,
TASKPLANS_EXPIRED_TOKEN.
"""

import hashlib
import os
import re
import sys
import time

from taskplans import TLS, TaskPlansError, dial, history_unavailable_of, merge_conflict_of
from taskplans.v1 import plan_pb2, plan_service_pb2 as ps, task_pb2

TARGET = os.environ["TASKPLANS_TARGET"]
FAILOVER_TARGET = os.environ["TASKPLANS_FAILOVER_TARGET"]
# TLS when TASKPLANS_TLS_CA is set (mTLS with TASKPLANS_TLS_CERT and TASKPLANS_TLS_KEY), else plaintext.
TRANSPORT = (
    TLS(
        ca_file=os.environ["TASKPLANS_TLS_CA"],
        cert_file=os.environ.get("TASKPLANS_TLS_CERT") or None,
        key_file=os.environ.get("TASKPLANS_TLS_KEY") or None,
        server_name=os.environ.get("TASKPLANS_TLS_SERVER_NAME") or None,
    )
    if os.environ.get("TASKPLANS_TLS_CA")
    else None
)
TASK = os.environ["TASKPLANS_TASK_ID"]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
APPEND, REPLACE = plan_pb2.WRITE_MODE_APPEND, plan_pb2.WRITE_MODE_REPLACE
TIMEOUT = 10.0
# Over 2,000 characters, so that the reduction guard judges a replacement of it.
INITIAL_PLAN = "# Plan\n- step one\n- step two\n\n## Notes\n" + (
    "- a note that keeps this plan long enough for the reduction guard\n" * 40
)


def quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def show(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    return str(value)


def fields(pairs):
    return "".join(f" {key}={show(value)}" for key, value in pairs)


def normalize(line):
    return UUID.sub("<uuid>", line.replace(TASK, "<task>"))


def step(name, call):
    """Prints the step's line: its fields, or the typed error's (an error the client library raised,
    with no ErrorInfo, prints "-" for the reason and no message)."""
    try:
        line = f"{name}: OK{fields(call() or [])}"
    except TaskPlansError as error:
        pairs = sorted((k, v) for k, v in error.metadata.items() if k != "request_id")
        pairs += [(f"violation.{field}", description) for field, description in error.field_violations]
        message = "" if error.reason is None else " | " + quote(error.message)
        line = f"{name}: {error.code} {error.reason or '-'}{fields(pairs)}{message}"
    print(normalize(line), flush=True)


def read_line():
    """The test's answer to the line just printed."""
    line = sys.stdin.readline()
    if not line:
        raise RuntimeError("stdin ended before the test answered")
    return line.rstrip("\n")


def written(response):
    return [
        ("version", response.plan.version),
        ("revision", response.revision.number),
        ("coalesced", response.revision.coalesced),
        ("bytes", response.plan.content_bytes),
    ]


def revision_list(revisions, next_page_token):
    return [
        ("count", len(revisions)),
        ("numbers", ",".join(str(r.revision_number) for r in revisions)),
        ("bytes", ",".join(str(r.content_bytes) for r in revisions)),
        ("reverts", ",".join("yes" if r.revert_of_revision_id else "no" for r in revisions)),
        ("next_page_token", next_page_token),
    ]


def kind_of(change):
    return ps.PlanChangeKind.Name(change.kind).removeprefix("PLAN_CHANGE_KIND_")


def change_list(changes):
    return [("kinds", ",".join(kind_of(c) for c in changes)),
            ("versions", ",".join(str(c.plan.version) for c in changes)),
            ("revisions", ",".join(str(c.revision.number) if c.HasField("revision") else "-" for c in changes))]


def sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_as(token):
    """GetPlan through a client of its own sending ``token`` (none when None)."""
    with dial(TARGET, token=token, tls=TRANSPORT, default_timeout=TIMEOUT) as other:
        other.get_plan(ps.GetPlanRequest(task_id=TASK))


def main():
    # The package's defaults (retries on), with a default timeout of 10 s.
    client = dial(TARGET, token=os.environ["TASKPLANS_TOKEN"], tls=TRANSPORT, default_timeout=TIMEOUT)
    plans, tasks = client.plans, client.tasks
    workspace = "ws-conformance"

    def create_task():
        t = tasks.CreateTask(
            task_pb2.CreateTaskRequest(task_id=TASK, workspace_id=workspace, title="Conformance"), timeout=TIMEOUT
        ).task
        return [("task_id", t.task_id), ("workspace_id", t.workspace_id), ("title", t.title)]

    step("create_task", create_task)
    step("create_task_again", lambda: tasks.CreateTask(
        task_pb2.CreateTaskRequest(task_id=TASK, workspace_id=workspace, title="Conformance"), timeout=TIMEOUT) and None)
    step("create_task_elsewhere", lambda: tasks.CreateTask(task_pb2.CreateTaskRequest(
        task_id=TASK + "-elsewhere", workspace_id="ws-elsewhere", title="Elsewhere"), timeout=TIMEOUT) and None)

    def get_task():
        t = tasks.GetTask(task_pb2.GetTaskRequest(task_id=TASK), timeout=TIMEOUT).task
        return [("task_id", t.task_id), ("workspace_id", t.workspace_id)]

    step("get_task", get_task)
    step("get_plan_none", lambda: plans.GetPlan(ps.GetPlanRequest(task_id=TASK), timeout=TIMEOUT) and None)
    step("invalid_task_id", lambda: plans.GetPlan(ps.GetPlanRequest(task_id=""), timeout=TIMEOUT) and None)
    step("create_plan", lambda: written(plans.CreatePlan(
        ps.CreatePlanRequest(task_id=TASK, title="Conformance plan", content=INITIAL_PLAN), timeout=TIMEOUT)))
    step("create_plan_again", lambda: plans.CreatePlan(
        ps.CreatePlanRequest(task_id=TASK, content="# Other\n"), timeout=TIMEOUT) and None)
    step("append", lambda: written(plans.UpdatePlan(
        ps.UpdatePlanRequest(task_id=TASK, mode=APPEND, content="\n## Findings\n- it works\n"), timeout=TIMEOUT)))

    def get_plan():
        p = plans.GetPlan(ps.GetPlanRequest(task_id=TASK), timeout=TIMEOUT).plan
        return [("version", p.version), ("title", p.title), ("bytes", p.content_bytes), ("chars", p.content_chars),
                ("latest_revision", p.latest_revision_number), ("content_sha256", sha256(p.content))]

    step("get_plan", get_plan)

    def update(**request):
        return lambda: plans.UpdatePlan(ps.UpdatePlanRequest(task_id=TASK, **request), timeout=TIMEOUT) and None

    step("stale_replace", update(mode=REPLACE, expected_version=1, content="# Plan\n- rewritten\n"))
    step("replace_without_version", update(mode=REPLACE, content="# Plan\n"))
    step("replace_empty", update(mode=REPLACE, expected_version=2, content=""))
    step("replace_shrinking", update(mode=REPLACE, expected_version=2, content="# P\n"))
    step("unknown_write_mode", update(mode=7, content="x"))
    step("append_blank", update(mode=APPEND, content=" \n\n"))
    step("append_acknowledging_reduction", update(mode=APPEND, content="- x\n", acknowledge_reduction=True))
    step("append_too_large", update(mode=APPEND, content="a" * 262_144))

    def edit(old_text, new_text):
        return lambda: written(plans.EditPlan(ps.EditPlanRequest(
            task_id=TASK, expected_version=2, old_text=old_text, new_text=new_text), timeout=TIMEOUT))

    step("edit_absent", edit("step three", "x"))
    step("edit_not_unique", edit("step", "x"))
    step("edit_without_text", edit("", "x"))
    step("edit", edit("step one", "step one (done)"))

    def retried(content):
        return lambda: written(plans.UpdatePlan(ps.UpdatePlanRequest(
            task_id=TASK, mode=APPEND, content=content, request_id=TASK + "-retry"), timeout=TIMEOUT))

    step("append_with_request_id", retried("- retried\n"))
    step("append_retried", retried("- retried\n"))
    step("request_id_reused", retried("- other\n"))

    def partial_read():
        r = plans.GetPlan(ps.GetPlanRequest(task_id=TASK, offset=2, limit=4), timeout=TIMEOUT)
        return [("content", r.plan.content), ("total_chars", r.total_chars), ("total_bytes", r.total_bytes),
                ("next_offset", r.next_offset if r.HasField("next_offset") else -1), ("has_more", r.has_more)]

    step("partial_read", partial_read)
    step("offset_past_end", lambda: plans.GetPlan(
        ps.GetPlanRequest(task_id=TASK, offset=100_000), timeout=TIMEOUT) and None)
    step("get_revision_missing", lambda: plans.GetPlanRevision(ps.GetPlanRevisionRequest(
        task_id=TASK, revision_id="00000000-0000-4000-8000-000000000000"), timeout=TIMEOUT) and None)
    first = {"id": "", "revision_version": ""}

    def list_revisions():
        r = plans.ListPlanRevisions(ps.ListPlanRevisionsRequest(task_id=TASK), timeout=TIMEOUT)
        if r.revisions:
            first["id"] = r.revisions[-1].id
        return revision_list(r.revisions, r.next_page_token)

    step("list_revisions", list_revisions)

    def get_revision():
        r = plans.GetPlanRevision(ps.GetPlanRevisionRequest(task_id=TASK, revision_id=first["id"]),
                                  timeout=TIMEOUT).revision
        first["revision_version"] = r.revision_version
        return [("number", r.revision_number), ("bytes", r.content_bytes), ("content_sha256", sha256(r.content))]

    step("get_revision", get_revision)
    step("revert", lambda: written(plans.RevertPlan(
        ps.RevertPlanRequest(task_id=TASK, revision_id=first["id"]), timeout=TIMEOUT)))
    step("save", lambda: written(plans.SavePlan(
        ps.SavePlanRequest(task_id=TASK, content="# Saved by an editor\n"), timeout=TIMEOUT)))

    def restore(revision_version):
        def call():
            r = plans.RestorePlanRevision(ps.RestorePlanRevisionRequest(
                task_id=TASK, revision_id=first["id"], expected_version=6,
                expected_revision_version=revision_version()), timeout=TIMEOUT)
            return [("status", ps.RestoreStatus.Name(r.status)), ("version", r.plan.version),
                    ("revision", r.revision.number)]
        return call

    step("restore_without_revision_version", restore(lambda: ""))
    step("restore_changed_revision", restore(lambda: "stale"))
    step("restore", restore(lambda: first["revision_version"]))

    def list_page():
        r = plans.ListPlanRevisions(ps.ListPlanRevisionsRequest(task_id=TASK, page_size=2), timeout=TIMEOUT)
        return revision_list(r.revisions, "<token>" if r.next_page_token else "")

    step("list_revisions_page", list_page)

    def mark_started():
        p = plans.MarkImplementationStarted(ps.MarkImplementationStartedRequest(
            task_id=TASK, session_id="session-1", actor="conformance"), timeout=TIMEOUT).plan
        return [("version", p.version), ("started_by", p.implementation_started_by),
                ("session", p.implementation_started_session_id)]

    step("mark_implementation_started", mark_started)
    def watch_take(count, after_version=None, include_content=False):
        """The first ``count`` changes of a watch(), then cancels it."""
        with client.watch(TASK, after_version, include_content) as watch:
            return [next(watch) for _ in range(count)]

    def watch_snapshot():
        [c] = watch_take(1, include_content=True)
        return [("kind", kind_of(c)), ("version", c.plan.version), ("content_sha256", sha256(c.plan.content))]

    step("watch_snapshot", watch_snapshot)
    step("watch_history", lambda: change_list(watch_take(4, after_version=4)))
    step("watch_ahead", lambda: change_list(watch_take(1, after_version=100)))
    step("delete_plan_stale", lambda: plans.DeletePlan(
        ps.DeletePlanRequest(task_id=TASK, expected_version=1), timeout=TIMEOUT) and None)
    step("delete_plan", lambda: plans.DeletePlan(ps.DeletePlanRequest(task_id=TASK), timeout=TIMEOUT) and None)
    step("watch_after_delete", lambda: change_list(watch_take(1, after_version=7)))
    step("get_plan_deleted", lambda: plans.GetPlan(ps.GetPlanRequest(task_id=TASK), timeout=TIMEOUT) and None)
    step("token_missing", lambda: read_as(None))
    step("token_invalid", lambda: read_as("not-a-token"))
    step("token_expired", lambda: read_as(os.environ["TASKPLANS_EXPIRED_TOKEN"]))
    # A deadline already past (a zero timeout races the answer on a fast server).
    step("deadline_exceeded", lambda: plans.GetPlan(ps.GetPlanRequest(task_id=TASK), timeout=-1.0) and None)
    resilience(client)
    changes_and_merge(client)
    export_and_import(client)
    step("delete_task", lambda: tasks.DeleteTask(task_pb2.DeleteTaskRequest(task_id=TASK), timeout=TIMEOUT) and None)
    step("get_task_deleted", lambda: tasks.GetTask(task_pb2.GetTaskRequest(task_id=TASK), timeout=TIMEOUT) and None)
    client.close()


def resilience(client):
    """The resilience steps: retries across a killed replica, a resumed watch, a token provider."""
    token = os.environ["TASKPLANS_TOKEN"]
    fragment = "retried fragment"
    step("recreate_plan", lambda: written(client.create_plan(
        ps.CreatePlanRequest(task_id=TASK, title="Resilience", content="# Resilience\n\nKept across replicas."))))
    with dial(FAILOVER_TARGET, token=token, tls=TRANSPORT, default_timeout=TIMEOUT) as failover:
        step("failover_read", lambda: [("version", failover.get_plan(ps.GetPlanRequest(task_id=TASK)).plan.version)])
        read_line()
        # No request_id: the package sets one, and sends it again on the retry after the replica dies.
        step("retried_append", lambda: written(failover.update_plan(
            ps.UpdatePlanRequest(task_id=TASK, mode=APPEND, content=fragment))))

        def applied():
            plan = client.get_plan(ps.GetPlanRequest(task_id=TASK)).plan
            return [("version", plan.version), ("occurrences", plan.content.count(fragment))]

        step("retried_append_applied", applied)
        watch = failover.watch(TASK)

        def next_change():
            c = next(watch)
            return [("kind", kind_of(c)), ("version", c.plan.version)]

        try:
            step("watch_resume_open", next_change)
            read_line()
            step("watch_resume_append", lambda: written(failover.update_plan(
                ps.UpdatePlanRequest(task_id=TASK, mode=APPEND, content="after the restart"))))
            step("watch_resumed", next_change)

            def cancelled():
                watch.cancel()
                rest = list(watch)
                if rest:
                    raise RuntimeError(f"the watch went on after cancel(): {rest}")
                return []

            step("watch_cancelled", cancelled)
        finally:
            watch.cancel()

    def expired():
        with client.watch(TASK, after_version=100) as ahead:
            for _ in ahead:
                pass
        return []

    step("watch_expired", expired)
    short_token, exp = read_line().split(" ")
    expires_at = float(exp)
    provider = {"calls": 0, "last": ""}

    def token_provider():
        provider["calls"] += 1
        refresh = time.time() >= expires_at - 1
        provider["last"] = "refreshed" if refresh else "short"
        return token if refresh else short_token

    with dial(TARGET, token_provider=token_provider, tls=TRANSPORT, default_timeout=TIMEOUT) as refreshing:
        def read_through(**options):
            plan = refreshing.get_plan(ps.GetPlanRequest(task_id=TASK), **options).plan
            return [("version", plan.version), ("provider_calls", provider["calls"]), ("token", provider["last"])]

        step("token_provider_first", read_through)
        time.sleep(max(0.0, expires_at + 1 - time.time()))
        step("token_override_expired", lambda: read_through(token=short_token))
        step("token_provider_refreshed", read_through)


def diff_fields(diff):
    return [("old_bytes", diff.old_bytes), ("new_bytes", diff.new_bytes), ("diff_bytes", diff.diff_bytes),
            ("lines_added", diff.lines_added), ("lines_removed", diff.lines_removed)]


def changes_fields(r):
    changes = ",".join(
        f"{c.version}:{kind_of(c)}:{plan_pb2.AuthorKind.Name(c.author.kind).removeprefix('AUTHOR_KIND_')}"
        for c in r.changes)
    return ([("version", r.plan.version), ("since_version", r.since_version)] + diff_fields(r.diff)
            + [("changes", changes), ("changes_truncated", r.changes_truncated), ("diff", r.diff.unified_diff)])


def merged_over(marker, present):
    return f"{marker.from_version}..{marker.to_version}" if present else "-..-"


def or_dash(value):
    return "-" if value is None else value


def export_and_import(client):
    """The steps of issue 46: the task listed, exported in one page, and an import refused to a token
    that is not an operator's."""

    def list_tasks():
        r = client.list_tasks(task_pb2.ListTasksRequest(workspace_id="ws-conformance", page_size=1000))
        return [("listed", any(t.task_id == TASK for t in r.tasks))]

    def export_task():
        r = client.export_task(task_pb2.ExportTaskRequest(task_id=TASK))
        last = r.revisions[-1].revision.content if r.revisions else ""
        return [("revisions", len(r.revisions)), ("revision_count", r.revision_count), ("more", r.more),
                ("version", r.head.plan.version), ("deleted", r.head.deleted), ("content_sha256", sha256(last))]

    def import_not_operator():
        start = task_pb2.ImportTaskStart(task=task_pb2.Task(task_id=TASK, workspace_id="ws-conformance", title="Conformance"))
        r = client.import_task([task_pb2.ImportTaskRequest(start=start)], timeout=TIMEOUT)
        return [("outcome", r.outcome)]

    step("list_tasks", list_tasks)
    step("export_task", export_task)
    step("import_not_operator", import_not_operator)


def changes_and_merge(client):
    """The steps of issue 44: changes since a version, a merged edit, a conflict, the refusals, a
    revision diff."""
    read = client.get_plan(ps.GetPlanRequest(task_id=TASK)).plan
    since = read.version

    def changes_since(version):
        return changes_fields(client.get_plan_changes(ps.GetPlanChangesRequest(task_id=TASK, since_version=version)))

    step("changes_none", lambda: changes_since(since))
    step("other_save", lambda: written(client.save_plan(ps.SavePlanRequest(
        task_id=TASK, content=read.content.replace("retried fragment", "retried fragment, checked", 1)))))
    step("changes_since", lambda: changes_since(since))

    def merged_edit():
        r = client.edit_plan(ps.EditPlanRequest(task_id=TASK, expected_version=since, old_text="Kept across replicas.",
                                                new_text="Kept across replicas, merged.", merge=True))
        method = ps.MergeMethod.Name(r.merge_method).removeprefix("MERGE_METHOD_")
        return written(r) + [("merged", merged_over(r.merge, r.HasField("merge"))), ("merge_method", method)]

    step("merged_edit", merged_edit)

    def conflicting():
        return client.edit_plan(ps.EditPlanRequest(task_id=TASK, expected_version=since, old_text="retried fragment\n",
                                                   new_text="retried twice\n", merge=True))

    step("merge_conflict", lambda: written(conflicting()))

    def merge_conflict_typed():
        try:
            conflicting()
            conflict = None
        except TaskPlansError as error:
            conflict = merge_conflict_of(error)
        return [("base_version", or_dash(conflict and conflict.base_version)),
                ("current_version", or_dash(conflict and conflict.current_version)),
                ("conflict_regions", or_dash(conflict and conflict.conflict_regions)),
                ("conflicts_bytes", len((conflict.conflicts if conflict else "").encode("utf-8")))]

    step("merge_conflict_typed", merge_conflict_typed)
    step("merge_on_append", lambda: written(client.update_plan(ps.UpdatePlanRequest(
        task_id=TASK, mode=APPEND, content="x", merge=True))))
    step("changes_ahead", lambda: changes_since(100))

    def changes_ahead_typed():
        try:
            client.get_plan_changes(ps.GetPlanChangesRequest(task_id=TASK, since_version=100))
            history = None
        except TaskPlansError as error:
            history = history_unavailable_of(error)
        return [("version", or_dash(history and history.version)),
                ("current_version", or_dash(history and history.current_version)),
                ("oldest_version", or_dash(history.oldest_version if history else None))]

    step("changes_ahead_typed", changes_ahead_typed)

    def diff_revisions():
        newer, older = client.list_plan_revisions(ps.ListPlanRevisionsRequest(task_id=TASK, page_size=2)).revisions
        r = client.diff_plan_revisions(ps.DiffPlanRevisionsRequest(task_id=TASK, from_revision_id=older.id,
                                                                   to_revision_id=newer.id))
        return ([("from", r.from_revision.revision_number), ("to", r.to_revision.revision_number),
                 ("to_merged", merged_over(r.to_revision.merge, r.to_revision.HasField("merge")))]
                + diff_fields(r.diff) + [("diff", r.diff.unified_diff)])

    step("diff_revisions", diff_revisions)


if __name__ == "__main__":
    sys.exit(main())
