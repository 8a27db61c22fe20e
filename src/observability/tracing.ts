import {
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
  type Tracer,
} from "@opentelemetry/api";

/** The tracing of calls; null everywhere when tracing is off, so that nothing runs for it. */
export interface Tracing {
  readonly tracer: Tracer;
  /**
   * The server span of one call (`rpc.system` grpc, `rpc.service`, `rpc.method`), the child of the
   * W3C `traceparent` the caller's metadata carries (a trace started in any language continues).
   */
  startCall(service: string, method: string, metadata: CallMetadata): CallSpan;
}

/** Reads call metadata (grpc-js Metadata has this shape). */
export interface CallMetadata {
  get(key: string): readonly (string | Buffer)[];
}

/** One call's span. Never carries plan content, titles or tokens: ids, codes and reasons only. */
export interface CallSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Runs `work` with this span active, so the lock, transaction and publish spans are its children. */
  run<T>(work: () => T): T;
  /** Adds an attribute the call learned (the task id once the request is decoded). */
  set(key: string, value: string): void;
  /** Ends the span with the call's gRPC status code and, for a refusal, its ErrorInfo reason. */
  end(code: number, codeName: string, reason: string | null): void;
}

const metadataGetter: TextMapGetter<CallMetadata> = {
  keys: () => [],
  get: (carrier, key) => {
    const values = carrier.get(key).map(String);
    return values.length <= 1 ? values[0] : values;
  },
};

// Codes that mean the server failed (OpenTelemetry's rule for gRPC server spans); other codes are
// the caller's business and leave the span's status unset.
const SERVER_ERRORS = new Set([
  "UNKNOWN",
  "DEADLINE_EXCEEDED",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
]);

/** Call tracing with `tracer` (the SDK's, registered globally with W3C propagation). */
export function callTracing(tracer: Tracer): Tracing {
  return {
    tracer,
    startCall(service, method, metadata) {
      const parent = propagation.extract(context.active(), metadata, metadataGetter);
      const span = tracer.startSpan(
        `${service}/${method}`,
        {
          kind: SpanKind.SERVER,
          attributes: { "rpc.system": "grpc", "rpc.service": service, "rpc.method": method },
        },
        parent,
      );
      const active: Context = trace.setSpan(parent, span);
      const { traceId, spanId } = span.spanContext();
      return {
        traceId,
        spanId,
        run: (work) => context.with(active, work),
        set: (key, value) => void span.setAttribute(key, value),
        end(code, codeName, reason) {
          span.setAttribute("rpc.grpc.status_code", code);
          if (reason) span.setAttribute("taskplans.error.reason", reason);
          if (SERVER_ERRORS.has(codeName))
            span.setStatus({ code: SpanStatusCode.ERROR, message: reason ?? codeName });
          span.end();
        },
      };
    },
  };
}

/** A child span of the active one that ran from `startedAt` until now (epoch ms). */
export function recordSpan(
  tracer: Tracer,
  name: string,
  startedAt: number,
  attributes: Record<string, string | number | boolean>,
  failed = false,
): void {
  const span: Span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: startedAt, attributes });
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The active span's ids, for log lines; empty when no trace is active. */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
