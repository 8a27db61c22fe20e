import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter as GrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { TracingConfig } from "../config/config";
import { callTracing, type Tracing } from "./tracing";

/**
 * The OpenTelemetry SDK, started only when an OTLP endpoint is configured: spans are batched and
 * exported over OTLP (gRPC or HTTP/protobuf, as OTEL_EXPORTER_OTLP_PROTOCOL says); the exporter, the
 * batch processor and the sampler read the standard OTEL_* variables themselves. Registers W3C
 * trace-context propagation and the async context manager process-wide.
 */
export function startTracingSdk(settings: TracingConfig): { tracing: Tracing; shutdown(): Promise<void> } {
  const resource = resourceFromAttributes({
    "service.name": "taskplans",
    "service.version": settings.serviceVersion,
  }).merge(detectResources({ detectors: [envDetector] }));
  const exporter = settings.protocol === "grpc" ? new GrpcExporter() : new ProtoExporter();
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  return {
    tracing: callTracing(trace.getTracer("taskplans", settings.serviceVersion)),
    shutdown: () => provider.shutdown(),
  };
}
