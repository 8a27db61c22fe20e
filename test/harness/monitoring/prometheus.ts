import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../servers/free-port";
import { requireBinary, stopProcess, waitFor } from "../servers/processes";
import { tracked } from "../servers/started-processes";

/** A throwaway Prometheus server (Debian's `prometheus` binary) started by a test. */
export interface PrometheusServer {
  readonly port: number;
  /** An instant query; throws with Prometheus's error (a parse error, for example). */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** The alerts the rule manager holds (pending and firing). */
  alerts(): Promise<{ labels: Record<string, string>; state: string }[]>;
  /** Its log so far (stderr), for a failure's message. */
  log(): string;
  stop(): Promise<void>;
}

/** What the server scrapes and evaluates. */
export interface PrometheusSetup {
  /** host:port of each /metrics endpoint, scraped as job `job` with these target labels. */
  readonly targets: readonly string[];
  readonly job: string;
  readonly labels: Record<string, string>;
  /** Rule groups (a rule file's content), evaluated every `intervalSeconds`. */
  readonly rules: unknown;
  readonly intervalSeconds: number;
}

/**
 * Starts prometheus on a free port with its configuration, rules and TSDB in a temp directory, and
 * waits until it is ready. Stopped by PID (and its directory removed) by `stop`, or by the harness's
 * record of started processes if a test dies first.
 */
export async function startPrometheus(setup: PrometheusSetup): Promise<PrometheusServer> {
  requireBinary("prometheus", "prometheus");
  const dir = mkdtempSync(join(tmpdir(), "taskplans-prometheus-"));
  const every = `${setup.intervalSeconds}s`;
  writeFileSync(join(dir, "rules.yaml"), stringify(setup.rules));
  writeFileSync(
    join(dir, "prometheus.yml"),
    stringify({
      global: { scrape_interval: every, evaluation_interval: every, scrape_timeout: every },
      rule_files: [join(dir, "rules.yaml")],
      scrape_configs: [
        { job_name: setup.job, static_configs: [{ targets: setup.targets, labels: setup.labels }] },
      ],
    }),
  );
  const port = await freePort();
  const logFile = join(dir, "prometheus.log");
  const child: ChildProcess = tracked(
    spawn(
      "prometheus",
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { cwd: dir, stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")] },
    ),
    `prometheus on port ${port}`,
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopProcess(child, 10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      `prometheus on ${port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited: ${readFileSync(logFile, "utf8")}`);
        return (await fetch(`${base}/-/ready`)).ok;
      },
      30_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${base}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  return {
    port,
    query: async (expr) =>
      (
        await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `/api/v1/query?query=${encodeURIComponent(expr)}`,
        )
      ).result,
    alerts: async () =>
      (await api<{ alerts: { labels: Record<string, string>; state: string }[] }>("/api/v1/alerts")).alerts,
    log: () => readFileSync(logFile, "utf8"),
    stop,
  };
}
