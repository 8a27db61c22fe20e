/**
 * The service with its secure and observable edges on, for `BENCH_VARIANTS=tls,mtls,tracing npm run
 * bench:overhead`: each variant's replica environment and the client that reaches it. Tracing exports
 * to the test OTLP receiver (a real OTLP/gRPC server; every span is decoded and written to a file).
 */
import { readFileSync } from "node:fs";
import { createClient, type TaskPlansClient } from "@taskplans/client";
import { type OtlpReceiver, startOtlpReceiver } from "../../test/harness/otlp/otlp-receiver";
import { makeCa } from "../../test/harness/identity/pki";
import type { ReplicaTls } from "../../test/harness/servers/replica";
import { connect } from "../../test/harness/calls/rpc";

export interface Variant {
  readonly name: string;
  readonly env: Record<string, string>;
  /** How the harness's health check reaches the replica (TLS variants). */
  readonly tls?: ReplicaTls;
  connect(port: number): TaskPlansClient;
}

const KNOWN = ["tls", "mtls", "tracing"];

/** The variants `spec` names (comma-separated); their receivers are stopped by `stop`. */
export async function variantsFrom(
  spec: string | undefined,
  dir: string,
): Promise<{ variants: Variant[]; stop(): Promise<void> }> {
  const names = (spec ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !KNOWN.includes(name));
  if (unknown.length > 0)
    throw new Error(`BENCH_VARIANTS: unknown ${unknown.join(", ")} (known: ${KNOWN.join(", ")})`);
  const receivers: OtlpReceiver[] = [];
  const variants: Variant[] = [];
  const ca = names.some((name) => name.endsWith("tls")) ? makeCa(dir, "bench-ca") : null;
  for (const name of names) {
    if (name === "tracing") {
      const receiver = await startOtlpReceiver(dir);
      receivers.push(receiver);
      variants.push({
        name: "tracing on (OTLP/gRPC, every span exported)",
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        connect: (port) => connect(port),
      });
      continue;
    }
    if (!ca) continue;
    const served = ca.issue(`bench-${name}-server`);
    const client = name === "mtls" ? ca.issue("bench-client") : undefined;
    variants.push({
      name: name === "mtls" ? "mTLS" : "TLS",
      env: {
        PLAN_GRPC_TLS_CERT_FILE: served.certFile,
        PLAN_GRPC_TLS_KEY_FILE: served.keyFile,
        ...(client ? { PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile } : {}),
      },
      tls: { ca: readFileSync(ca.certFile), ...(client ? { client } : {}) },
      connect: (port) =>
        createClient(`127.0.0.1:${port}`, {
          defaultTimeoutMs: 0,
          retry: false,
          tls: {
            caFile: ca.certFile,
            ...(client ? { certFile: client.certFile, keyFile: client.keyFile } : {}),
          },
        }),
    });
  }
  return { variants, stop: async () => void (await Promise.all(receivers.map((r) => r.stop()))) };
}
