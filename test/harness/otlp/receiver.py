"""A test OTLP/gRPC trace receiver: decodes every ExportTraceServiceRequest with OpenTelemetry's own
protobuf definitions (the opentelemetry-proto package) and appends one JSON line per span to a file.

usage: receiver.py <port> <spans.jsonl>   (prints "listening <port>" once it serves)
"""

import json
import sys
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, path):
        self.path = path

    def Export(self, request, context):
        with open(self.path, "a", encoding="utf-8") as out:
            for resource_spans in request.resource_spans:
                resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.write(
                            json.dumps(
                                {
                                    "service": resource.get("service.name"),
                                    "scope": scope_spans.scope.name,
                                    "traceId": span.trace_id.hex(),
                                    "spanId": span.span_id.hex(),
                                    "parentSpanId": span.parent_span_id.hex(),
                                    "name": span.name,
                                    "kind": span.kind,
                                    "start": span.start_time_unix_nano,
                                    "end": span.end_time_unix_nano,
                                    "status": span.status.code,
                                    "attributes": {a.key: value_of(a.value) for a in span.attributes},
                                }
                            )
                            + "\n"
                        )
        return trace_service_pb2.ExportTraceServiceResponse()


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(path), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print(f"listening {bound}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
