import { type GaleraCluster, startGaleraCluster } from "../harness/databases/galera";
import { firstWritesAfter } from "../harness/jepsen/recorded-appends";
import { createPodNetwork, type PodNetwork } from "../harness/network/pod-network";
import { metricsOf, runGaleraScenario, sleep, untilProgress } from "./scenario";

// As node-loss.test.ts: how long a replica whose node left the primary component may take to write
// to every task again (the node's peers must first declare it gone: evs.suspect_timeout and
// inactive_timeout, 2 s and 4 s here; then the health probe, 200 ms here).
const RECOVERY_WITHIN_MS = 30_000;

describe("the service on a 3-node Galera cluster in network namespaces: a node partitioned", () => {
  let network: PodNetwork;
  let cluster: GaleraCluster;
  beforeAll(async () => {
    network = createPodNetwork(); // fails with a message saying what is missing; never skipped
    cluster = await startGaleraCluster({ network });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    network?.close();
  });

  it("node 0 cut off from nodes 1 and 2 (packets dropped both ways), still reachable by replica 0: it leaves the primary component, replica 0 moves on and writes again; healed, node 0 rejoins", async () => {
    await runGaleraScenario(
      "node 0 partitioned from its peers",
      cluster,
      async ({ replicas, taskIds }, workload) => {
        const [isolated, ...peers] = cluster.nodes;
        const pod = isolated?.pod;
        if (!pod) throw new Error("the cluster runs in pods");
        const peerAddresses = peers.map((n) => n.host);
        await untilProgress(workload, 0.3);
        const cutAt = Date.now();
        pod.cut(peerAddresses);
        const resumed = await firstWritesAfter(
          workload,
          replicas[0] as never,
          0,
          taskIds,
          cutAt,
          RECOVERY_WITHIN_MS,
        );
        const status = await isolated.status();
        expect(status.component).not.toBe("Primary");
        expect(resumed).not.toBeNull();
        const metrics = await metricsOf(replicas[0] as never);
        expect(metrics).toMatch(
          /taskplans_db_node_moves_total\{from="[\d.]+:\d+",to="[\d.]+:\d+",reason="(non_primary|not_ready)"\} 1/,
        );
        await untilProgress(workload, 0.6);
        pod.heal(peerAddresses);
        const healedAt = Date.now();
        await cluster.waitSynced(3);
        const rejoinMs = Date.now() - healedAt;
        await sleep(200);
        return `cut node 0 from its peers at 30% (it said ${status.component}, ready ${status.ready}): replica 0 wrote to every task again after ${resumed} ms; healed, node 0 Synced again after ${rejoinMs} ms`;
      },
    );
  });
});
