import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { GaleraCluster } from "../harness/databases/galera";
import { type RedisNode, startRedisNodes } from "../harness/databases/redis";
import { checkRun } from "../harness/jepsen/check-run";
import { ResumingWatcher } from "../harness/jepsen/resuming-watcher";
import { startWorkload, type Workload } from "../harness/jepsen/workload";
import { connect } from "../harness/calls/rpc";
import { execSql } from "../harness/databases/sql";
import { type Replica, startReplica } from "../harness/servers/replica";

/** Operations of a scenario's list-append workload (the fault suite's checker replays them). */
export const OPERATIONS = 1_500;
/** The Redis lease (PLAN_LOCK_LEASE_MS): short, so that the lease-lost scenario loses it. */
export const LEASE_MS = 1_000;

/** What a scenario's fault sees: the two replicas (replica i starts on node i), Redis and the tasks. */
export interface GaleraScenario {
  readonly cluster: GaleraCluster;
  readonly replicas: readonly Replica[];
  readonly redis: readonly RedisNode[];
  readonly taskIds: readonly string[];
  readonly database: string;
  /** An open-ended run's workload stops issuing operations. */
  stop(): void;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Until the workload has issued `fraction` of OPERATIONS. */
export async function untilProgress(workload: Workload, fraction: number): Promise<void> {
  while (workload.history.length < OPERATIONS * fraction) await sleep(5);
}

/** A replica's /metrics text. */
export async function metricsOf(replica: Replica): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${replica.metricsPort ?? 0}/metrics`);
  return response.text();
}

/**
 * Two replicas on two different nodes of `cluster` (each names all three in PLAN_DATABASE_URL, its
 * own first), three Redis nodes, the fault suite's list-append workload over three hot tasks and a
 * resuming watcher per task; `inject` applies the fault while the workload runs. Then the checker
 * replays every task's stored history against every outcome (nothing acknowledged lost, nothing
 * applied twice) and each watcher must have received every committed version once, in order.
 */
export async function runGaleraScenario(
  name: string,
  cluster: GaleraCluster,
  inject: (scenario: GaleraScenario, workload: Workload) => Promise<string>,
  options: {
    openEnded?: boolean;
    env?: Record<string, string>;
    minimumOk?: number;
    /** Each replica is given its node's address alone (as behind a proxy), not the node list. */
    singleNode?: boolean;
  } = {},
): Promise<{ reasons: Map<string, number> }> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-galera-run-"));
  const database = `g_${randomBytes(5).toString("hex")}`;
  await cluster.createDatabase(database);
  const redis = await startRedisNodes(3);
  const env = (first: number) => ({
    PLAN_DATABASE_URL: options.singleNode
      ? (cluster.urlsFor(database)[first] ?? "")
      : cluster.clusterUrl(database, first),
    PLAN_REDIS_URLS: redis.map((n) => n.url).join(","),
    PLAN_COALESCE_WINDOW_MS: "0", // every write is one revision, so the history shows every commit
    PLAN_LOCK_LEASE_MS: String(LEASE_MS),
    PLAN_LOCK_WAIT_MS: "3000",
    PLAN_HEALTH_INTERVAL_MS: "200",
    PLAN_WATCH_POLL_INTERVAL_MS: "500",
    ...options.env,
  });
  let keep = false;
  const replicas: Replica[] = [];
  const watchers: ResumingWatcher[] = [];
  try {
    // One after the other: the first migrates, the second finds the schema current.
    for (const first of [0, 1])
      replicas.push(await startReplica(env(first), logDir, null, { metrics: true }));
    const setup = connect(replicas[0]?.port ?? 0);
    const taskIds = ["hot-a", "hot-b", "hot-c"].map((t) => `${t}-${database}`);
    for (const taskId of taskIds) {
      await setup.tasks.createTask({ taskId, workspaceId: "ws" });
      await setup.plans.createPlan({ taskId, content: "# Plan\nstatus: 0\n" });
    }
    setup.close();
    for (const taskId of taskIds) watchers.push(new ResumingWatcher(replicas, taskId, 1));
    let stopped = false;
    const workload = startWorkload({
      stop: () => stopped,
      ports: replicas.map((r) => r.port),
      taskIds,
      clients: 6,
      operations: OPERATIONS,
      deadlineMs: 4_000,
    });
    const stop = () => void (stopped = true);
    const evidence = await inject({ cluster, replicas, redis, taskIds, database, stop }, workload);
    const history = await workload.done();
    await cluster.waitApplied();
    const reader = cluster.nodes.find((n) => n.running)?.index ?? 0;
    const url = cluster.urlsFor(database)[reader] ?? "";
    const { summary, watched } = await checkRun(history, url, taskIds, watchers).catch(
      async (error: unknown) => {
        const shared = /share version (\d+)/.exec(String(error))?.[1];
        if (shared) {
          const ops = history.filter((op) => op.version === Number(shared));
          console.log(JSON.stringify(ops));
          for (const op of ops)
            console.log(
              op.id,
              JSON.stringify(
                await execSql(
                  url,
                  "SELECT revision_number, content FROM task_plan_revisions WHERE task_id = ? AND revision_number BETWEEN ? AND ? ORDER BY 1",
                  [op.taskId, Number(shared) - 1, Number(shared) + 2],
                ),
              ),
            );
        }
        keep = true;
        throw error;
      },
    );
    const reasons = new Map<string, number>();
    for (const op of history.filter((o) => o.outcome !== "ok"))
      reasons.set(op.reason ?? "", (reasons.get(op.reason ?? "") ?? 0) + 1);
    console.log(
      `[galera scenario] ${name}: ${summary.operations} ops, ${summary.ok} ok, ${summary.failed} failed, ` +
        `${summary.unknown} unknown (${summary.unknownApplied} of them applied), ${summary.revisions} revisions checked; ` +
        `${evidence}; non-ok reasons: ${JSON.stringify(Object.fromEntries(reasons))}; ` +
        `watchers received ${watched} changes, each committed version once, in order`,
    );
    expect(summary.operations).toBe(history.length);
    expect(summary.ok).toBeGreaterThan(options.minimumOk ?? summary.operations / 4);
    return { reasons };
  } finally {
    for (const watcher of watchers) await watcher.stop();
    for (const replica of replicas) await replica.stop();
    for (const node of redis) await node.stop();
    // The causes the replicas logged for INTERNAL answers (call-scope.ts), for the run's record.
    const errors = readdirSync(logDir)
      .flatMap((file) => readFileSync(join(logDir, file), "utf8").split("\n"))
      .filter((line) => line.includes('"level":50') && line.includes('"err"'));
    if (errors.length > 0)
      console.log(
        `[galera scenario] ${name}: ${errors.length} error lines, first: ${errors.slice(0, 2).join(" | ")}`,
      );
    if (keep) console.log(`[galera scenario] ${name}: replica logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}
