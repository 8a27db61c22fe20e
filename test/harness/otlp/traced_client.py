"""A Python back end as its team traces it: the OpenTelemetry SDK with the standard gRPC
instrumentation (opentelemetry-instrumentation-grpc), calling the service through the taskplans
client package inside a span of its own. Prints that span's trace id.

usage: traced_client.py <host:port> <OTLP gRPC endpoint host:port>
"""

import sys
import time

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.grpc import GrpcInstrumentorClient
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def main():
    target, endpoint = sys.argv[1], sys.argv[2]
    provider = TracerProvider(resource=Resource.create({"service.name": "python-backend"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=True)))
    trace.set_tracer_provider(provider)
    GrpcInstrumentorClient().instrument()
    # Imported after the instrumentation, as its documentation asks.
    from taskplans.client import dial
    from taskplans.v1 import plan_pb2, plan_service_pb2 as ps, task_pb2

    task_id = f"traced-py-{time.time_ns()}"
    with dial(target) as client:
        with trace.get_tracer("python-backend").start_as_current_span("backend job") as span:
            client.tasks.CreateTask(task_pb2.CreateTaskRequest(task_id=task_id, workspace_id="ws-1", title="traced"), timeout=10)
            client.plans.CreatePlan(ps.CreatePlanRequest(task_id=task_id, content="# Traced\n"), timeout=10)
            client.plans.UpdatePlan(
                ps.UpdatePlanRequest(task_id=task_id, content="- a step", mode=plan_pb2.WRITE_MODE_APPEND), timeout=10
            )
            trace_id = span.get_span_context().trace_id
    provider.shutdown()
    print(format(trace_id, "032x"))


if __name__ == "__main__":
    main()
