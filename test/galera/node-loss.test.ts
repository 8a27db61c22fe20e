import { type GaleraCluster, startGaleraCluster } from "../harness/databases/galera";
import { firstWritesAfter } from "../harness/jepsen/recorded-appends";
import { metricsOf, runGaleraScenario, sleep, untilProgress } from "./scenario";

// How long a replica whose node died may take to write to every task again: the health probe's
// interval (200 ms here), a refused connection, the move, and the Redis lease of a write caught on
// the dead node. Without a node list (or a replica that never moves) it never writes again.
const RECOVERY_WITHIN_MS = 30_000;

describe("the service on a 3-node Galera cluster: a node lost (two replicas on two nodes)", () => {
  let cluster: GaleraCluster;
  beforeAll(async () => {
    cluster = await startGaleraCluster();
  }, 120_000);
  afterAll(() => cluster?.stop());

  it("kill -9 of the node replica 0 writes through: it moves to another node and writes to every task again; the node restarts and rejoins by IST", async () => {
    await runGaleraScenario(
      "kill -9 of replica 0's node",
      cluster,
      async ({ replicas, taskIds }, workload) => {
        await untilProgress(workload, 0.3);
        const killedAt = Date.now();
        await cluster.nodes[0]?.kill();
        const resumed = await firstWritesAfter(
          workload,
          replicas[0] as never,
          0,
          taskIds,
          killedAt,
          RECOVERY_WITHIN_MS,
        );
        console.log(
          `[galera] replica 0 wrote to every task again ${resumed ?? "never"} ms after its node's kill -9`,
        );
        expect(resumed).not.toBeNull();
        const metrics = await metricsOf(replicas[0] as never);
        expect(metrics).toMatch(
          /taskplans_db_node_moves_total\{from="127\.0\.0\.1:\d+",to="127\.0\.0\.1:\d+",reason="unreachable"\} 1/,
        );
        await untilProgress(workload, 0.6);
        const restartAt = Date.now();
        await cluster.nodes[0]?.start();
        await cluster.waitSynced(3);
        const rejoinMs = Date.now() - restartAt;
        expect(cluster.nodes[0]?.log()).toMatch(/IST received|Receiving IST/);
        return `killed node 0 at 30%: replica 0 wrote to every task again after ${resumed} ms; node 0 restarted and Synced (IST) after ${rejoinMs} ms`;
      },
    );
  });

  it("majority lost (kill -9 of two nodes): no write is acknowledged until the survivor is bootstrapped, then writes resume through both replicas; the two rejoin by IST", async () => {
    await runGaleraScenario(
      "majority lost, then bootstrap",
      cluster,
      async ({ replicas, taskIds, stop }, workload) => {
        await untilProgress(workload, 0.2);
        const killedAt = Date.now();
        await Promise.all([cluster.nodes[1]?.kill(), cluster.nodes[2]?.kill()]);
        // The survivor leaves the primary component (its peers' suspect and inactive timeouts).
        while ((await cluster.nodes[0]?.status())?.component === "Primary") await sleep(100);
        const nonPrimaryMs = Date.now() - killedAt;
        await sleep(3_000); // the outage: every write is refused meanwhile
        const bootstrappedAt = Date.now();
        await cluster.nodes[0]?.bootstrap();
        const resumed = await Promise.all(
          [0, 1].map((i) =>
            firstWritesAfter(workload, replicas[i] as never, i, taskIds, bootstrappedAt, RECOVERY_WITHIN_MS),
          ),
        );
        // Nothing started after the loss was acknowledged before the bootstrap.
        const acknowledgedMeanwhile = workload.history.filter(
          (op) =>
            op.outcome === "ok" &&
            (op.startedAt ?? 0) > killedAt &&
            (op.endedAt ?? Number.POSITIVE_INFINITY) < bootstrappedAt,
        ).length;
        expect(acknowledgedMeanwhile).toBe(0);
        expect(resumed.every((ms) => ms !== null)).toBe(true);
        const moved = await metricsOf(replicas[0] as never);
        const restartAt = Date.now();
        await cluster.nodes[1]?.start();
        await cluster.nodes[2]?.start();
        await cluster.waitSynced(3);
        const rejoinMs = Date.now() - restartAt;
        stop();
        console.log(
          `[galera] majority lost: replica 0's metrics after: ${moved
            .split("\n")
            .filter((l) => l.startsWith("taskplans_db_node"))
            .join("; ")}`,
        );
        return (
          `killed nodes 1 and 2 at 20%: node 0 non-Primary after ${nonPrimaryMs} ms, ${acknowledgedMeanwhile} writes acknowledged until its bootstrap; ` +
          `every task written again through replicas 0 and 1 ${resumed.join(" and ")} ms after the bootstrap; nodes 1 and 2 Synced again after ${rejoinMs} ms`
        );
      },
      { openEnded: true, minimumOk: 50 },
    );
  });
});
