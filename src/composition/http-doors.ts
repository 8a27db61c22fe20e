import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { TlsSource } from "@taskplans/tls";
import { bearerTokenOf } from "../auth/bearer-header";
import type { TokenVerifier } from "../auth/token-verifier";
import type { Config } from "../config/config";
import { CspReportIntake } from "../console/csp-report-intake";
import { edgeGuard } from "../http/edge-guard";
import type { DoorService } from "../http/connect-routes";
import { startHttpListener } from "../http/http-listener";
import { MAX_MESSAGE_BYTES } from "../grpc/server";
import { httpEdgeCounters } from "../observability/http-edge-metrics";
import { startMetricsServer } from "../observability/metrics-server";

/** The HTTP listeners the start opened, and how they stop. */
export interface HttpDoors {
  readonly httpPort: number | null;
  readonly metricsPort: number | null;
  /** Stops refusing and counting (the guards' windows, the CSP intake's). */
  stopGuards(): void;
  /** Lets the HTTP door's calls in flight finish for up to `drainMs`, then closes it. */
  closeDoor(drainMs: number): Promise<void>;
  closeMetrics(): Promise<void>;
}

/**
 * The start's HTTP step: the HTTP door (the gRPC port's handlers and call scope over Connect and
 * gRPC-Web, and the console) and /metrics, each when its address is set. Every request of either
 * passes its listener's Host and Origin rules first; the console's CSP reports are rate-limited,
 * follow auth and are logged within bounds.
 */
export async function startHttpDoors(
  config: Config,
  deps: {
    readonly registry: Registry;
    readonly logger: Logger;
    readonly verifier: TokenVerifier | null;
    readonly services: readonly DoorService[];
    readonly grpcTls: TlsSource | null;
    readonly metricsTls: TlsSource | null;
  },
): Promise<HttpDoors> {
  const { registry, logger, verifier } = deps;
  const httpEdge = httpEdgeCounters(registry);
  const guardOf = (listener: "http" | "metrics", address: string) =>
    edgeGuard({
      listener,
      address,
      allowedHosts: config.httpAllowedHosts,
      corsOrigins: config.httpCorsOrigins,
      logger,
      onRefused: (rule) => httpEdge.refused(listener, rule),
    });
  const cspReports = new CspReportIntake({
    authenticate: verifier
      ? async (authorization) =>
          Boolean(await verifier.verify(bearerTokenOf(authorization === undefined ? [] : [authorization])))
      : null,
    logger,
    count: (outcome) => httpEdge.cspReport(outcome),
  });
  const httpGuard = config.httpAddress ? guardOf("http", config.httpAddress) : null;
  const http =
    config.httpAddress && httpGuard
      ? await startHttpListener({
          address: config.httpAddress,
          services: deps.services,
          readMaxBytes: MAX_MESSAGE_BYTES,
          corsOrigins: config.httpCorsOrigins,
          limits: config.httpLimits,
          tls: deps.grpcTls,
          logger,
          edge: httpGuard,
          cspReports,
        })
      : null;
  const metricsGuard = config.metricsAddress ? guardOf("metrics", config.metricsAddress) : null;
  const metrics = config.metricsAddress
    ? await startMetricsServer(registry, config.metricsAddress, deps.metricsTls, metricsGuard)
    : null;
  return {
    httpPort: http?.port ?? null,
    metricsPort: metrics?.port ?? null,
    stopGuards() {
      cspReports.close();
      httpGuard?.close();
      metricsGuard?.close();
    },
    closeDoor: async (drainMs) => {
      await http?.close(drainMs);
    },
    closeMetrics: async () => {
      await metrics?.close();
    },
  };
}
