"""Dialing the task-plan service with sensible defaults."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import grpc

from taskplans.v1 import plan_service_pb2_grpc, task_pb2_grpc

# Reads (idempotent) are retried on UNAVAILABLE. Writes never are: retry a write yourself with the same
# request_id, which the server answers with the first outcome instead of writing twice.
_SERVICE_CONFIG = {
    "methodConfig": [
        {
            "name": [
                {"service": "taskplans.v1.PlanService", "method": "GetPlan"},
                {"service": "taskplans.v1.PlanService", "method": "ListPlanRevisions"},
                {"service": "taskplans.v1.PlanService", "method": "GetPlanRevision"},
                {"service": "taskplans.v1.TaskService", "method": "GetTask"},
            ],
            "retryPolicy": {
                "maxAttempts": 4,
                "initialBackoff": "0.1s",
                "maxBackoff": "2s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE"],
            },
        }
    ]
}

DEFAULT_OPTIONS: Tuple[Tuple[str, object], ...] = (
    ("grpc.service_config", json.dumps(_SERVICE_CONFIG)),
    ("grpc.enable_retries", 1),
    # One ping a minute keeps idle connections through proxies, within the server's ping policy.
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
)


@dataclass
class Client:
    """One channel and both services' stubs. Pass ``timeout=`` (seconds) on every call for a deadline."""

    channel: grpc.Channel
    plans: plan_service_pb2_grpc.PlanServiceStub
    tasks: task_pb2_grpc.TaskServiceStub

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _Bearer(grpc.AuthMetadataPlugin):
    def __init__(self, token: str) -> None:
        self._metadata = (("authorization", f"Bearer {token}"),)

    def __call__(self, context: grpc.AuthMetadataContext, callback: grpc.AuthMetadataPluginCallback) -> None:
        callback(self._metadata, None)


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


def dial(
    target: str,
    token: Optional[str] = None,
    credentials: Optional[grpc.ChannelCredentials] = None,
    options: Sequence[Tuple[str, object]] = (),
    tls: Optional[TLS] = None,
) -> Client:
    """Connects to ``target`` ("host:port" or any gRPC target such as "dns:///plans.internal:50051").

    ``token`` is sent as ``authorization: Bearer <token>`` on every call. Without ``tls`` or
    ``credentials`` the channel is plaintext (inside a cluster); ``tls=TLS(ca_file=...)`` connects
    over TLS (mTLS with ``cert_file`` and ``key_file``), and ``credentials`` takes any
    ``grpc.ChannelCredentials`` instead. ``options`` are laid over the defaults (keepalive, read
    retries).
    """
    if tls is not None and credentials is not None:
        raise ValueError("give tls or credentials, not both")
    if tls is not None:
        credentials = tls.credentials()
    merged = dict(DEFAULT_OPTIONS)
    if tls is not None and tls.server_name is not None:
        merged["grpc.ssl_target_name_override"] = tls.server_name
    merged.update(dict(options))
    channel_options = list(merged.items())
    if credentials is None:
        channel = grpc.insecure_channel(target, options=channel_options)
        if token is not None:
            channel = grpc.intercept_channel(channel, _BearerInterceptor(token))
    else:
        if token is not None:
            credentials = grpc.composite_channel_credentials(
                credentials, grpc.metadata_call_credentials(_Bearer(token))
            )
        channel = grpc.secure_channel(target, credentials, options=channel_options)
    return Client(
        channel=channel,
        plans=plan_service_pb2_grpc.PlanServiceStub(channel),
        tasks=task_pb2_grpc.TaskServiceStub(channel),
    )


class _CallDetails(grpc.ClientCallDetails):
    def __init__(self, details: grpc.ClientCallDetails, metadata: Sequence[Tuple[str, str]]) -> None:
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = metadata
        self.credentials = details.credentials
        self.wait_for_ready = details.wait_for_ready
        self.compression = details.compression


class _BearerInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds the bearer token on a plaintext channel (call credentials need a secure one), to unary
    calls and to server streams (WatchPlan) alike."""

    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    def _details(self, client_call_details):  # type: ignore[no-untyped-def]
        metadata = list(client_call_details.metadata or ())
        if not any(key == "authorization" for key, _ in metadata):  # a per-call token wins
            metadata.append(self._header)
        return _CallDetails(client_call_details, metadata)

    def intercept_unary_unary(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return continuation(self._details(client_call_details), request)
