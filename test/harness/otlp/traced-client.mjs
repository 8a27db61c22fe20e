// A TypeScript back end as its team traces it: the OpenTelemetry SDK with the standard gRPC
// instrumentation (@opentelemetry/instrumentation-grpc), calling the service through the client
// package inside a span of its own. Prints that span's trace id.
// usage: node traced-client.mjs <host:port> <OTLP gRPC endpoint>
/* global process */
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { GrpcInstrumentation } from "@opentelemetry/instrumentation-grpc";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";

const [target, endpoint] = process.argv.slice(2);
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "ts-backend" }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
});
provider.register();
registerInstrumentations({ instrumentations: [new GrpcInstrumentation()] });
// Loaded after the instrumentation is registered, so that its grpc-js is the instrumented one.
const { createClient } = await import("@taskplans/client");

async function main() {
  const client = createClient(target, { defaultTimeoutMs: 10_000 });
  const tracer = trace.getTracer("ts-backend");
  const traceId = await tracer.startActiveSpan("backend job", async (span) => {
    const taskId = `traced-ts-${Date.now()}`;
    await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "traced" });
    await client.plans.createPlan({ taskId, content: "# Traced\n" });
    await client.plans.updatePlan({ taskId, content: "- a step", mode: 2 });
    // A refusal: replacing without the version read (INVALID_ARGUMENT VERSION_REQUIRED).
    await client.plans.updatePlan({ taskId, content: "# Replaced\n" }).then(
      () => Promise.reject(new Error("the replace without a version was accepted")),
      () => undefined,
    );
    span.end();
    return span.spanContext().traceId;
  });
  client.close();
  await provider.shutdown();
  process.stdout.write(`${traceId}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
