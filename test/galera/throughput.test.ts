import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WriteMode } from "@taskplans/contract";
import { type GaleraCluster, startGaleraCluster } from "../harness/databases/galera";
import { createDatabase, startMariaDb } from "../harness/databases/mariadb";
import { startRedisNodes } from "../harness/databases/redis";
import { connect } from "../harness/calls/rpc";
import { type Replica, startReplica } from "../harness/servers/replica";

const WRITERS = 8;
const RUN_MS = 8_000;

interface Figures {
  readonly perSecond: number;
  readonly p99: number;
  readonly failed: number;
}

/** 8 writers, each appending to a task of its own through one of two replicas in turn, for RUN_MS. */
async function appendLoad(urls: readonly [string, string], logDir: string): Promise<Figures> {
  const redis = await startRedisNodes(3);
  const replicas: Replica[] = [];
  try {
    for (const url of urls)
      replicas.push(
        await startReplica(
          {
            PLAN_DATABASE_URL: url,
            PLAN_REDIS_URLS: redis.map((n) => n.url).join(","),
            PLAN_COALESCE_WINDOW_MS: "0",
          },
          logDir,
        ),
      );
    const clients = replicas.map((r) => connect(r.port));
    const latencies: number[] = [];
    let failed = 0;
    const until = Date.now() + RUN_MS;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        const client = clients[writer % clients.length] as ReturnType<typeof connect>;
        const taskId = `load-${writer}-${Date.now()}`;
        await client.tasks.createTask({ taskId, workspaceId: "ws" });
        await client.plans.createPlan({ taskId, content: "# Plan\n" });
        for (let i = 0; Date.now() < until; i++) {
          const started = performance.now();
          try {
            await client.plans.updatePlan({ taskId, content: `- ${i}`, mode: WriteMode.WRITE_MODE_APPEND });
            latencies.push(performance.now() - started);
          } catch {
            failed++;
          }
        }
      }),
    );
    for (const client of clients) client.close();
    latencies.sort((a, b) => a - b);
    return {
      perSecond: latencies.length / (RUN_MS / 1000),
      p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
      failed,
    };
  } finally {
    for (const replica of replicas) await replica.stop();
    for (const node of redis) await node.stop();
  }
}

describe("appends with 8 writers on 2 replicas: Galera (3 nodes, the replicas on two) against one MariaDB, same run", () => {
  let cluster: GaleraCluster;
  beforeAll(async () => {
    cluster = await startGaleraCluster();
  }, 120_000);
  afterAll(() => cluster?.stop());

  it("measures appends/s and p99 of each; every append succeeds on both", async () => {
    const logDir = mkdtempSync(join(tmpdir(), "taskplans-galera-load-"));
    const single = await startMariaDb();
    try {
      await createDatabase(single.port, "load");
      const one = await appendLoad([single.urlFor("load"), single.urlFor("load")], logDir);
      await cluster.createDatabase("load");
      const galera = await appendLoad([cluster.clusterUrl("load", 0), cluster.clusterUrl("load", 1)], logDir);
      console.log(
        `[galera load] 8 writers, 2 replicas, ${RUN_MS / 1000} s each: one MariaDB ${one.perSecond.toFixed(0)} appends/s, p99 ${one.p99.toFixed(1)} ms; ` +
          `Galera (replicas on nodes 0 and 1) ${galera.perSecond.toFixed(0)} appends/s, p99 ${galera.p99.toFixed(1)} ms; ` +
          `ratio ${(galera.perSecond / one.perSecond).toFixed(2)}`,
      );
      expect([one.failed, galera.failed]).toEqual([0, 0]);
      expect(galera.perSecond).toBeGreaterThan(0);
    } finally {
      await single.stop();
      rmSync(logDir, { recursive: true, force: true });
    }
  });
});
