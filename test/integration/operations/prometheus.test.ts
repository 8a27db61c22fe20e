import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { WriteMode } from "@taskplans/contract";
import { createDatabase, type MariaDb, startMariaDb } from "../../harness/databases/mariadb";
import {
  alertsOf,
  chartDashboards,
  RELEASE,
  renderedRules,
  type RuleGroups,
} from "../../harness/monitoring/monitoring-chart";
import { waitFor } from "../../harness/servers/processes";
import { type PrometheusServer, startPrometheus } from "../../harness/monitoring/prometheus";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { createClient } from "@taskplans/client";
import type { Clients } from "../../harness/calls/rpc";
import { randomId } from "../../harness/servers/test-app";

// The chart's dashboard and alert rules against a real Prometheus (Debian's binary, scraping every
// second) and two real replicas (the built server on MariaDB with a Redis node) under a short load
// with faults: client errors, a replica killed and restarted, then the database stopped. Every
// dashboard panel's expression and every alert's expression is queried through the HTTP API and must
// parse; every panel must return series, and every series an alert reads must exist. The database
// outage must make TaskplansStorageUnavailable, the write-availability fast burn and (pruning passes
// failing) TaskplansChangePruneFallingBehind fire for real. Each replica's pool gauges are checked.
// The rules are the chart's, rendered with their `for` durations shortened to seconds.

const SCRAPE_SECONDS = 1;

/** A dashboard expression as Grafana would send it for this release. */
const resolved = (expr: string) =>
  expr
    .replaceAll("$namespace", RELEASE.namespace)
    .replaceAll("$job", RELEASE.name)
    .replaceAll("$__rate_interval", "1m");

// Series only the embedded database exports (taskplans_sqlite_wal_bytes): the replicas here run on
// MariaDB, so a panel or rule reading nothing else must parse and find none;
// test/integration/storage/database-gauges.test.ts proves the series on SQLite.
const EMBEDDED_ONLY = new Set(["taskplans_sqlite_wal_bytes"]);

/** The metric names an expression reads (a name followed by its selector). */
const seriesNames = (expr: string) => [
  ...new Set([...expr.matchAll(/([a-zA-Z_:][\w:]*)\{/g)].map((m) => m[1] ?? "")),
];

/** A writer and reader loop that also makes client errors (not found, stale version), until `stopped()`. */
async function clientLoop(
  clients: () => Clients,
  stopped: () => boolean,
  counts: Map<string, number>,
): Promise<void> {
  const note = (what: string) => counts.set(what, (counts.get(what) ?? 0) + 1);
  const attempt = async (what: string, call: () => Promise<unknown>) => {
    try {
      await call();
      note(`${what} ok`);
    } catch (error) {
      note(`${what} ${String((error as { code?: number }).code)}`);
    }
  };
  while (!stopped()) {
    const api = clients();
    const taskId = randomId("prom");
    await attempt("create task", () => api.tasks.createTask({ taskId, workspaceId: "ws" }));
    await attempt("create plan", () => api.plans.createPlan({ taskId, content: "# Plan\n" }));
    for (let i = 0; i < 3; i++)
      await attempt("append", () =>
        api.plans.updatePlan({ taskId, content: `- step ${i}`, mode: WriteMode.WRITE_MODE_APPEND }),
      );
    await attempt("stale replace", () =>
      api.plans.updatePlan({
        taskId,
        content: "# Old\n",
        mode: WriteMode.WRITE_MODE_REPLACE,
        expectedVersion: 1,
      }),
    );
    await attempt("read", () => api.plans.getPlan({ taskId }));
    await attempt("revisions", () => api.plans.listPlanRevisions({ taskId }));
    await attempt("read missing", () => api.plans.getPlan({ taskId: randomId("missing") }));
  }
}

describe("the chart's dashboard and alert rules on a real Prometheus scraping two replicas", () => {
  let mariadb: MariaDb | null = null;
  let redis: RedisNode[] = [];
  const replicas: Replica[] = [];
  let prometheus: PrometheusServer | null = null;
  let logDir = "";

  afterAll(async () => {
    await prometheus?.stop();
    for (const replica of replicas) await replica.stop();
    for (const node of redis) await node.stop();
    await mariadb?.stop();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  it("answers every panel and alert expression with series, stays quiet while healthy, and fires when the database stops", async () => {
    logDir = mkdtempSync(join(tmpdir(), "taskplans-prometheus-replicas-"));
    mariadb = await startMariaDb();
    await createDatabase(mariadb.port, "prom");
    redis = await startRedisNodes(1);
    const env = {
      PLAN_DATABASE_URL: mariadb.urlFor("prom"),
      PLAN_REDIS_URLS: redis.map((n) => n.url).join(","),
      PLAN_HEALTH_INTERVAL_MS: "500",
      PLAN_CHANGES_PRUNE_INTERVAL_MS: "1000",
    };
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(env, logDir, null, { metrics: true }));
    const b = replicas[1] as Replica;
    // Latency bounds at the histograms' top buckets: the quiet phase must not depend on how fast a
    // shared machine runs (no timed assertion); latency alerts are proven by promtool's cases.
    const rules: RuleGroups = renderedRules(
      "--set",
      "prometheusRule.burnRate.fastFor=5s",
      "--set",
      "prometheusRule.causes.storageUnavailable.for=5s",
      // A pass a second, each failing while the database is away: falling behind in seconds.
      "--set",
      "prometheusRule.causes.pruneFallingBehind.passes=3",
      "--set",
      "prometheusRule.causes.pruneFallingBehind.for=5s",
      "--set-string",
      "prometheusRule.slo.readLatency.seconds=10",
      "--set-string",
      "prometheusRule.slo.writeLatency.seconds=10",
      "--set-string",
      "prometheusRule.slo.watchDelivery.seconds=30",
    );
    prometheus = await startPrometheus({
      targets: replicas.map((r) => `127.0.0.1:${r.metricsPort}`),
      job: RELEASE.name,
      labels: { namespace: RELEASE.namespace },
      rules,
      intervalSeconds: SCRAPE_SECONDS,
    });
    const server = prometheus;

    // Load through both replicas; replica b is killed and restarted in the middle of it.
    // Calls carry a deadline: none may hang the load when the database is gone.
    const clients = replicas.map((r) =>
      createClient(`127.0.0.1:${r.port}`, { defaultTimeoutMs: 5_000, retry: false }),
    );
    let turn = 0;
    const next = () => clients[turn++ % clients.length] as Clients;
    let stopLoad = false;
    const counts = new Map<string, number>();
    const load = Promise.all([0, 1, 2].map(() => clientLoop(next, () => stopLoad, counts)));
    const streams: ReturnType<Clients["plans"]["watchPlan"]>[] = [];
    try {
      await sleep(6_000);
      await b.kill();
      await b.restart();
      await sleep(6_000);
      // A WatchPlan stream is open on each replica while the panels are read.
      const taskId = randomId("watched");
      await clients[0]?.tasks.createTask({ taskId, workspaceId: "ws" });
      for (const c of clients) streams.push(c.plans.watchPlan({ taskId, afterVersion: 0 }));
      for (const stream of streams) stream.on("error", () => undefined);
      // Only a change committed after its stream opened is timed (replays are not delays): wait
      // until each replica holds its stream, read from its own /metrics, before committing any.
      await waitFor(
        "a WatchPlan stream open on each replica",
        async () => {
          const bodies = await Promise.all(
            replicas.map(async (r) => (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text()),
          );
          return bodies.every((body) => /^taskplans_watch_streams 1$/m.test(body));
        },
        10_000,
      );
      // Changes committed while both streams are open: the delivery-delay histogram's observations.
      await clients[0]?.plans.createPlan({ taskId, content: "# Watched\n" });
      for (let i = 0; i < 5; i++)
        await clients[i % 2]?.plans.updatePlan({
          taskId,
          content: `- ${i}`,
          mode: WriteMode.WRITE_MODE_APPEND,
        });
      await waitFor(
        "both targets up and every objective's ratio recorded",
        async () =>
          (await server.query("sum(up)"))[0]?.value[1] === "2" &&
          (await server.query("count(taskplans:slo_errors:ratio_rate3d)"))[0]?.value[1] === "5",
        30_000,
      );
      expect(
        (await server.query('max(changes(process_start_time_seconds{job="taskplans"}[5m]))'))[0]?.value[1],
      ).toBe("1");
      // Each stream was handed the 6 changes committed while it was open, each timed once.
      await waitFor(
        "6 delivery delays observed on each replica",
        async () =>
          (await server.query('taskplans_watch_delivery_seconds_count{job="taskplans"} == 6')).length === 2,
        20_000,
      );
      // The pruner (a pass a second here) moves its liveness gauge on both replicas.
      const pruning = await server.query(
        'changes(taskplans_changes_prune_last_statement_timestamp_seconds{job="taskplans"}[1m]) > 2',
      );
      expect(pruning).toHaveLength(2);
      // ... and every pass finished its work (a small history, nothing past its retention).
      expect(
        await server.query('taskplans_changes_prune_incomplete_passes{job="taskplans"} == 0'),
      ).toHaveLength(2);
      // Each replica's MariaDB pool: its limit (PLAN_DATABASE_POOL_SIZE's default), its connections
      // by state, and the requests waiting for one.
      expect(await server.query('taskplans_db_pool_max_connections{job="taskplans"} == 10')).toHaveLength(2);
      expect(
        await server.query('count by (instance) (taskplans_db_pool_connections{job="taskplans"}) == 2'),
      ).toHaveLength(2);
      expect(
        await server.query('sum by (instance) (taskplans_db_pool_connections{job="taskplans"}) >= 1'),
      ).toHaveLength(2);
      expect(await server.query('taskplans_db_pool_waiting_requests{job="taskplans"} >= 0')).toHaveLength(2);
      // Writes by mode: the load's appends committed, its stale replaces failed.
      expect(
        await server.query(
          'sum by (mode, outcome) (taskplans_writes_total{job="taskplans",mode=~"append|replace",outcome=~"committed|failed"}) > 0',
        ),
      ).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ metric: { mode: "append", outcome: "committed" } }),
          expect.objectContaining({ metric: { mode: "replace", outcome: "failed" } }),
        ]),
      );
      // Healthy (client errors and one restart included): nothing pending, nothing firing.
      expect(await server.alerts()).toEqual([]);
      expect([...counts.keys()]).toEqual(
        expect.arrayContaining(["append ok", "read ok", "stale replace 10", "read missing 5"]),
      );

      // The database stops: calls fail STORAGE_UNAVAILABLE, pruning passes fail, and the alerts fire.
      await mariadb.stop();
      const firing = async () =>
        new Set(
          (await server.alerts())
            .filter((x) => x.state === "firing")
            .map((x) => `${x.labels.alertname}/${x.labels.slo ?? ""}`),
        );
      await waitFor(
        "TaskplansStorageUnavailable, the write-availability fast burn and pruning falling behind firing",
        async () => {
          const now = await firing();
          return (
            now.has("TaskplansStorageUnavailable/") &&
            now.has("TaskplansErrorBudgetBurnFast/write_availability") &&
            now.has("TaskplansChangePruneFallingBehind/")
          );
        },
        60_000,
      );
      const names = new Set(alertsOf(rules).map((r) => r.alert));
      for (const name of await firing()) expect(names.has(name.split("/")[0])).toBe(true);

      // Every panel answers with series (server-side failures included, now that there are some),
      // and every rule parses and reads only series the replicas export or the rules record.
      const empty: string[] = [];
      const embedded: string[] = [];
      for (const panel of chartDashboards().flatMap((d) => d.panels))
        for (const target of panel.targets) {
          const found = (await server.query(resolved(target.expr))).length;
          if (seriesNames(target.expr).every((name) => EMBEDDED_ONLY.has(name))) {
            if (found > 0) embedded.push(`${panel.title}: ${target.expr}`);
          } else if (found === 0) empty.push(`${panel.title}: ${target.expr}`);
        }
      expect(empty).toEqual([]);
      expect(embedded).toEqual([]);
      const missing: string[] = [];
      for (const rule of rules.groups.flatMap((g) => g.rules)) {
        await server.query(rule.expr); // throws on a parse error
        for (const name of seriesNames(rule.expr)) {
          const found = await server.query(`count({__name__="${name}",job="${RELEASE.name}"})`);
          if ((found.length === 0) !== EMBEDDED_ONLY.has(name))
            missing.push(`${rule.alert ?? rule.record}: ${name}`);
        }
      }
      // (an embedded-only series found on MariaDB is listed too)
      expect(missing).toEqual([]);
    } finally {
      stopLoad = true;
      for (const stream of streams) stream.cancel();
      await load;
      for (const c of clients) c.close();
    }
  });
});
