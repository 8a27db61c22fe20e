import { createServer, type RequestListener } from "node:http";
import type { Registry } from "prom-client";
import { httpsServer, ListenError, type TlsSource } from "@taskplans/tls";
import type { EdgeGuard } from "../http/edge-guard";

/**
 * Serves GET /metrics (Prometheus text format) on its own address (PLAN_METRICS_ADDRESS), apart from
 * gRPC, over HTTPS with `tls`; rejects with a ListenError naming the setting when the address cannot be used.
 * With `edge`, every request passes its Host rule first (edge-guard.ts): a DNS-rebinding page cannot
 * read the replica's figures through a browser, while Prometheus, which scrapes the pod IP, passes.
 */
export async function startMetricsServer(
  registry: Registry,
  address: string,
  tls: TlsSource | null = null,
  edge: EdgeGuard | null = null,
): Promise<{ port: number; close(): Promise<void> }> {
  const separator = address.lastIndexOf(":");
  const host = address.slice(0, separator).replace(/^\[|\]$/g, "");
  const serve: RequestListener = (req, res) => {
    if (edge && !edge.admit(req, res)) return;
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") return void res.writeHead(404).end();
    registry.metrics().then(
      (body) => res.writeHead(200, { "content-type": registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  };
  const server = tls ? httpsServer(tls, serve) : createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(new ListenError("PLAN_METRICS_ADDRESS", address, error)));
    server.listen(Number(address.slice(separator + 1)), host, resolve);
  });
  const bound = server.address();
  return {
    port: typeof bound === "object" && bound ? bound.port : 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
