import { type GaleraCluster, startGaleraCluster } from "../harness/databases/galera";

// The harness itself: three nodes on loopback form one primary component, replicate a write, lose a
// node to kill -9 and take it back (IST), and stop exactly what they started.
describe("a throwaway 3-node Galera cluster on loopback", () => {
  let cluster: GaleraCluster;
  beforeAll(async () => {
    cluster = await startGaleraCluster();
  }, 240_000);
  afterAll(() => cluster?.stop());

  it("replicates a write to every node, survives the kill -9 of one and takes it back by IST", async () => {
    const [a, b, c] = cluster.nodes;
    await cluster.createDatabase("smoke");
    await a?.sql("CREATE TABLE smoke.t (id INT PRIMARY KEY, v TEXT)");
    await b?.sql("INSERT INTO smoke.t VALUES (1, 'through b')");
    expect(await c?.sql("SET SESSION wsrep_sync_wait = 1; SELECT v FROM smoke.t")).toContainEqual([
      { v: "through b" },
    ]);
    // A statement of its own may opt out of the session's causality wait (a history page does).
    expect(await c?.sql("SET STATEMENT wsrep_sync_wait = 0 FOR SELECT v FROM smoke.t")).toEqual([
      { v: "through b" },
    ]);
    await c?.kill();
    expect(c?.running).toBe(false);
    await cluster.waitSynced(2, 30_000);
    await a?.sql("INSERT INTO smoke.t VALUES (2, 'while c was down')");
    await c?.start();
    await cluster.waitSynced(3);
    expect(await c?.sql("SELECT COUNT(*) AS n FROM smoke.t")).toEqual([{ n: 2 }]);
    expect(c?.log()).toMatch(/IST received|Receiving IST/);
  });
});
