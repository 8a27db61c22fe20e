import { request } from "node:http";
import { Metadata } from "@grpc/grpc-js";
import { healthClient } from "../../test/harness/calls/grpc-clients";
import type { ServerProcess } from "./server";

const SERVING = new Set(["SERVING", "1"]);

/**
 * Calls grpc.health.v1.Health/Check on one server over its own connection, one call at a time
 * every `everyMs`, and reports each latency; a call slower than `boundMs` (it is cancelled at
 * bound + 2 s) or answering anything but SERVING is a violation.
 */
export class HealthProbe {
  readonly latencies: number[] = [];
  maxMs = 0;
  private stopped = false;
  private running: Promise<void> | null = null;
  private readonly client;

  constructor(
    readonly server: ServerProcess,
    private readonly boundMs: number,
    private readonly onViolation: (message: string) => void,
    private readonly everyMs = 250,
  ) {
    this.client = healthClient(server.port);
  }

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    this.client.close();
  }

  /** Latencies since the last call (for the interval table). */
  drain(): number[] {
    return this.latencies.splice(0);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const started = performance.now();
      const outcome = await this.check();
      const ms = performance.now() - started;
      this.latencies.push(ms);
      this.maxMs = Math.max(this.maxMs, ms);
      if (ms > this.boundMs) {
        this.onViolation(
          `health check of ${this.server.name} took ${ms.toFixed(0)} ms (bound ${this.boundMs} ms): ${outcome}`,
        );
      } else if (!SERVING.has(outcome)) {
        this.onViolation(`health check of ${this.server.name} answered ${outcome}`);
      }
      await new Promise((resolve) => setTimeout(resolve, this.everyMs));
    }
  }

  private check(): Promise<string> {
    return new Promise((resolve) => {
      const deadline = Date.now() + this.boundMs + 2_000;
      const call = this.client.Check as (...args: unknown[]) => unknown;
      call.call(
        this.client,
        { service: "" },
        new Metadata(),
        { deadline },
        (
          error: { code: number; details: string } | null,
          response: { status: string | number } | undefined,
        ) => resolve(error ? `error ${error.code} ${error.details}` : String(response?.status)),
      );
    });
  }
}

/** What one scrape of a server's Prometheus /metrics says (event-loop delay since the last scrape). */
export interface MetricsScrape {
  readonly loopP50Ms: number;
  readonly loopP99Ms: number;
  readonly loopMaxMs: number;
  readonly heapUsedMb: number;
}

/**
 * Scrapes /metrics (PLAN_METRICS_ADDRESS). prom-client's default metrics reset their event-loop
 * delay histogram at every scrape, so each figure covers the time since the previous one.
 */
export function scrapeMetrics(port: number, timeoutMs = 3_000): Promise<MetricsScrape | null> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/metrics", timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        const value = (name: string) =>
          Number(new RegExp(`^${name} ([0-9.eE+-]+)$`, "m").exec(body)?.[1] ?? NaN);
        resolve({
          loopP50Ms: value("nodejs_eventloop_lag_p50_seconds") * 1000,
          loopP99Ms: value("nodejs_eventloop_lag_p99_seconds") * 1000,
          loopMaxMs: value("nodejs_eventloop_lag_max_seconds") * 1000,
          heapUsedMb: value("nodejs_heap_size_used_bytes") / 1024 / 1024,
        });
      });
    });
    req.on("timeout", () => req.destroy(new Error("metrics scrape timed out")));
    req.on("error", () => resolve(null));
    req.end();
  });
}
