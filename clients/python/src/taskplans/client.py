"""Dialing the task-plan service with the defaults of clients/SDK.md: deadlines, safe retries,
tokens (static, from a provider, or per call), typed errors and a resuming watch."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

import grpc

from taskplans._interceptor import Interceptor, TokenProvider, bearer
from taskplans.errors import Metadata
from taskplans.retry import DEFAULT_RETRY_POLICY, RetryPolicy
from taskplans.v1 import plan_service_pb2 as ps
from taskplans.v1 import plan_service_pb2_grpc, task_pb2, task_pb2_grpc
from taskplans.watch import Watch

#: Every unary call's deadline when it gives none, in seconds, over all its attempts.
DEFAULT_TIMEOUT = 30.0

DEFAULT_OPTIONS: Tuple[Tuple[str, object], ...] = (
    # No channel retry policy (the client's interceptor is the one retry layer); gRPC's transparent
    # retry of a call that never left the client stays on.
    ("grpc.enable_retries", 1),
    # One ping a minute keeps idle connections (and watch streams) through proxies, within the
    # server's ping policy; 20 s to answer finds a dead connection.
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    # Reconnect to a restarted replica within the retry policy's backoff (gRPC's default starts at
    # 1 s and grows to 120 s).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 5_000),
    # No service config from DNS TXT records: the client is the only retry layer.
    ("grpc.service_config_disable_resolution", 1),
)


@dataclass(frozen=True)
class TLS:
    """PEM files for ``dial(tls=...)``, read when ``dial`` runs.

    ``ca_file``: the CA bundle the server's certificate is checked against (None: the system's
    roots). ``cert_file`` and ``key_file``: a client certificate and its key, for a service that
    requires mTLS. ``server_name``: the name the server's certificate must carry, when not the
    target's host.
    """

    ca_file: Optional[str] = None
    cert_file: Optional[str] = None
    key_file: Optional[str] = None
    server_name: Optional[str] = None

    def credentials(self) -> grpc.ChannelCredentials:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("TLS cert_file and key_file go together")

        def read(path: Optional[str]) -> Optional[bytes]:
            if path is None:
                return None
            with open(path, "rb") as pem:
                return pem.read()

        return grpc.ssl_channel_credentials(
            root_certificates=read(self.ca_file),
            private_key=read(self.key_file),
            certificate_chain=read(self.cert_file),
        )


def _call_metadata(token: Optional[str], metadata: Optional[Metadata]) -> Optional[Metadata]:
    entries = tuple(metadata or ())
    if token is not None:  # the per-call token wins over any authorization in metadata too
        entries = tuple(e for e in entries if e[0].lower() != "authorization") + (bearer(token),)
    return entries or None


class Client:
    """One channel and both services.

    ``plans`` and ``tasks`` are the generated stubs (``client.plans.GetPlan(request)``); the methods
    (``client.get_plan(request, token=...)``) call the same stubs and add a per-call ``token``. Every
    unary call has a deadline (``timeout=`` seconds, else the client's default), retries by the
    client's policy when it is safe, and raises ``TaskPlansError`` when it fails.
    """

    def __init__(self, channel: grpc.Channel, retry: Optional[RetryPolicy] = None) -> None:
        self.channel = channel
        self.retry = retry
        self.plans: plan_service_pb2_grpc.PlanServiceStub = plan_service_pb2_grpc.PlanServiceStub(channel)
        self.tasks: task_pb2_grpc.TaskServiceStub = task_pb2_grpc.TaskServiceStub(channel)
        self._watches: "weakref.WeakSet[Watch]" = weakref.WeakSet()

    def close(self) -> None:
        """Closes the channel; open watches end with no error."""
        for watch in list(self._watches):
            watch.cancel()
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # PlanService

    def get_plan(
        self, request: ps.GetPlanRequest, *, timeout: Optional[float] = None, token: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> ps.GetPlanResponse:
        return self.plans.GetPlan(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def create_plan(
        self, request: ps.CreatePlanRequest, *, timeout: Optional[float] = None, token: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> ps.WritePlanResponse:
        return self.plans.CreatePlan(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def update_plan(
        self, request: ps.UpdatePlanRequest, *, timeout: Optional[float] = None, token: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> ps.WritePlanResponse:
        return self.plans.UpdatePlan(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def edit_plan(
        self, request: ps.EditPlanRequest, *, timeout: Optional[float] = None, token: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> ps.WritePlanResponse:
        return self.plans.EditPlan(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def restore_plan_revision(
        self, request: ps.RestorePlanRevisionRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> ps.RestorePlanRevisionResponse:
        return self.plans.RestorePlanRevision(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def save_plan(
        self, request: ps.SavePlanRequest, *, timeout: Optional[float] = None, token: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> ps.WritePlanResponse:
        return self.plans.SavePlan(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def delete_plan(
        self, request: ps.DeletePlanRequest, *, timeout: Optional[float] = None, token: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> ps.DeletePlanResponse:
        return self.plans.DeletePlan(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def list_plan_revisions(
        self, request: ps.ListPlanRevisionsRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> ps.ListPlanRevisionsResponse:
        return self.plans.ListPlanRevisions(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def get_plan_revision(
        self, request: ps.GetPlanRevisionRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> ps.GetPlanRevisionResponse:
        return self.plans.GetPlanRevision(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def get_plan_changes(
        self, request: ps.GetPlanChangesRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> ps.GetPlanChangesResponse:
        """What changed since ``since_version``: the current version, a unified diff, the changes in
        between. Raises HISTORY_UNAVAILABLE when that version's content can no longer be derived."""
        return self.plans.GetPlanChanges(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def diff_plan_revisions(
        self, request: ps.DiffPlanRevisionsRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> ps.DiffPlanRevisionsResponse:
        """A unified diff between two revisions of a task."""
        return self.plans.DiffPlanRevisions(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def revert_plan(
        self, request: ps.RevertPlanRequest, *, timeout: Optional[float] = None, token: Optional[str] = None,
        metadata: Optional[Metadata] = None,
    ) -> ps.WritePlanResponse:
        return self.plans.RevertPlan(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def mark_implementation_started(
        self, request: ps.MarkImplementationStartedRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> ps.MarkImplementationStartedResponse:
        return self.plans.MarkImplementationStarted(
            request, timeout=timeout, metadata=_call_metadata(token, metadata)
        )

    def watch(
        self, task_id: str, after_version: Optional[int] = None, include_content: bool = False, *,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> Watch:
        """The changes of a task's plan: a SNAPSHOT first when no ``after_version`` is given, then
        every change; reopened after the last version yielded on a retriable error. No deadline:
        ``cancel()`` it (or use it in a ``with`` block)."""
        call_metadata = _call_metadata(token, metadata)

        def open_stream(after: Optional[int]) -> object:
            request = ps.WatchPlanRequest(task_id=task_id, after_version=after, include_content=include_content)
            return self.plans.WatchPlan(request, metadata=call_metadata)

        watch = Watch(open_stream, after_version, self.retry)
        self._watches.add(watch)
        return watch

    # TaskService

    def create_task(
        self, request: task_pb2.CreateTaskRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> task_pb2.CreateTaskResponse:
        return self.tasks.CreateTask(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def get_task(
        self, request: task_pb2.GetTaskRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> task_pb2.GetTaskResponse:
        return self.tasks.GetTask(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def delete_task(
        self, request: task_pb2.DeleteTaskRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> task_pb2.DeleteTaskResponse:
        return self.tasks.DeleteTask(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def list_tasks(
        self, request: task_pb2.ListTasksRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> task_pb2.ListTasksResponse:
        """A page of the tasks the caller reaches, in id order (export). Retried."""
        return self.tasks.ListTasks(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def export_task(
        self, request: task_pb2.ExportTaskRequest, *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> task_pb2.ExportTaskResponse:
        """A page of a task's export: the task, its HEAD and the next revisions. Retried."""
        return self.tasks.ExportTask(request, timeout=timeout, metadata=_call_metadata(token, metadata))

    def import_task(
        self, requests: Iterable[task_pb2.ImportTaskRequest], *, timeout: Optional[float] = None,
        token: Optional[str] = None, metadata: Optional[Metadata] = None,
    ) -> task_pb2.ImportTaskResponse:
        """Imports one exported task (operators only): a ``start`` message, then ``revisions``.
        Not retried (the requests are read once); the import is idempotent, so run it again."""
        return self.tasks.ImportTask(iter(requests), timeout=timeout, metadata=_call_metadata(token, metadata))


def dial(
    target: str,
    token: Optional[str] = None,
    credentials: Optional[grpc.ChannelCredentials] = None,
    options: Sequence[Tuple[str, object]] = (),
    tls: Optional[TLS] = None,
    *,
    token_provider: Optional[TokenProvider] = None,
    retry: Optional[RetryPolicy] = DEFAULT_RETRY_POLICY,
    default_timeout: Optional[float] = DEFAULT_TIMEOUT,
) -> Client:
    """Connects to ``target`` ("host:port" or any gRPC target such as "dns:///plans.internal:50051").

    Without ``tls`` or ``credentials`` the channel is plaintext (inside a cluster);
    ``tls=TLS(ca_file=...)`` connects over TLS (mTLS with ``cert_file`` and ``key_file``), and
    ``credentials`` takes any ``grpc.ChannelCredentials`` instead.

    ``token`` is sent as ``authorization: Bearer <token>`` on every call; or ``token_provider``, a
    callable returning the current token, called before every attempt (an exception it raises fails
    the call with UNAUTHENTICATED, not retried). A call's own token (``token=`` on the methods) or
    ``authorization`` metadata wins, and the provider is then not called.

    ``retry``: how safe calls are retried (``RetryPolicy()``'s defaults); None turns retries off.
    ``default_timeout``: the deadline in seconds of a unary call that gives none, over all its
    attempts (None or 0: none). ``options`` are laid over the channel defaults (keepalive,
    reconnect backoff).
    """
    if tls is not None and credentials is not None:
        raise ValueError("give tls or credentials, not both")
    interceptor = Interceptor(token, token_provider, retry, default_timeout)
    if tls is not None:
        credentials = tls.credentials()
    merged = dict(DEFAULT_OPTIONS)
    if tls is not None and tls.server_name is not None:
        merged["grpc.ssl_target_name_override"] = tls.server_name
    merged.update(dict(options))
    channel_options = list(merged.items())
    # The token travels as metadata added by the interceptor on plaintext and TLS channels alike
    # (gRPC's call credentials need a secure channel, and the per-call override must win over both).
    if credentials is None:
        raw = grpc.insecure_channel(target, options=channel_options)
    else:
        raw = grpc.secure_channel(target, credentials, options=channel_options)
    return Client(grpc.intercept_channel(raw, interceptor), retry)
