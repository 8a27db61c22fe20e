import type { Socket } from "node:net";
import { createServer, type Server } from "node:net";
import { parseDatabaseUrl } from "../../../src/config/database-url";
import { DatabaseNodes, NoUsableNodeError } from "../../../src/storage/database-nodes";
import { type MoveReason, nodeVerdict } from "../../../src/storage/node-verdict";

describe("PLAN_DATABASE_URL naming several nodes", () => {
  it("keeps a single host's URL as it is", () => {
    expect(parseDatabaseUrl("mysql://u:p@db:3307/plans")).toEqual({
      url: "mysql://u:p@db:3307/plans",
      nodes: [{ host: "db", port: 3307 }],
    });
    expect(parseDatabaseUrl("sqlite:./var/plans.sqlite")).toEqual({
      url: "sqlite:./var/plans.sqlite",
      nodes: [],
    });
  });

  it("reads a comma-separated node list, port 3306 by default; the URL then names the first", () => {
    expect(parseDatabaseUrl("mysql://u:p@db-0:3306,db-1,[::1]:3307/plans?x=1")).toEqual({
      url: "mysql://u:p@db-0:3306/plans?x=1",
      nodes: [
        { host: "db-0", port: 3306 },
        { host: "db-1", port: 3306 },
        { host: "::1", port: 3307 },
      ],
    });
  });

  it("refuses a node named twice, an empty entry and a bad port", () => {
    expect(() => parseDatabaseUrl("mysql://u@a:1,a:1/d")).toThrow(/twice/);
    expect(() => parseDatabaseUrl("mysql://u@a:1,,b/d")).toThrow(/not host or host:port/);
    expect(() => parseDatabaseUrl("mysql://u@a:99999/d")).toThrow(/out of range/);
  });
});

describe("a Galera node's verdict", () => {
  const synced = {
    wsrep_on: "ON",
    wsrep_cluster_status: "Primary",
    wsrep_ready: "ON",
    wsrep_local_state: "4",
  };
  it("a server without Galera, and a Synced node of the primary component, take writes", () => {
    expect(nodeVerdict({})).toBeNull();
    expect(nodeVerdict({ wsrep_on: "OFF" })).toBeNull();
    expect(nodeVerdict(synced)).toBeNull();
  });
  it("a node cut off from the majority, not ready, or not Synced does not", () => {
    expect(nodeVerdict({ ...synced, wsrep_cluster_status: "non-Primary", wsrep_ready: "OFF" })).toBe(
      "non_primary",
    );
    expect(nodeVerdict({ ...synced, wsrep_ready: "OFF" })).toBe("not_ready");
    expect(nodeVerdict({ ...synced, wsrep_local_state: "2" })).toBe("not_synced");
  });
});

describe("the node a replica talks to", () => {
  const nodes = [
    { host: "127.0.0.1", port: 0 },
    { host: "127.0.0.1", port: 0 },
    { host: "127.0.0.1", port: 0 },
  ];
  const login = { user: "u", password: "p" };

  it("stays on a node that can take writes, and moves to the next one that can when it cannot", async () => {
    const verdicts: (MoveReason | null)[] = [null, null, null];
    const moves: string[] = [];
    const router = new DatabaseNodes(
      nodes.map((n, i) => ({ ...n, port: 1000 + i })),
      login,
      { onMove: (from, to, reason) => moves.push(`${from.port}->${to.port} ${reason}`) },
      async (node) => verdicts[node.port - 1000] ?? null,
    );
    await router.check();
    expect(router.current.port).toBe(1000);
    verdicts[0] = "non_primary";
    verdicts[1] = "unreachable";
    await router.check();
    expect(router.current.port).toBe(1002);
    verdicts[0] = null; // it does not move back by itself
    await router.check();
    expect(router.current.port).toBe(1002);
    expect(moves).toEqual(["1000->1002 non_primary"]);
  });

  it("fails its check when no node can take writes (readiness: NOT_SERVING), and stays", async () => {
    const router = new DatabaseNodes(nodes, login, { onMove: () => undefined }, async () => "unreachable");
    await expect(router.check()).rejects.toThrow(NoUsableNodeError);
  });

  it("destroys every socket to the node it leaves, none to the others", async () => {
    const servers: Server[] = [];
    const ports: number[] = [];
    for (let i = 0; i < 2; i++) {
      const server = createServer(() => undefined);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      servers.push(server);
      ports.push((server.address() as { port: number }).port);
    }
    let leave = false;
    const router = new DatabaseNodes(
      ports.map((port) => ({ host: "127.0.0.1", port })),
      login,
      { onMove: () => undefined },
      async (node) => (leave && node.port === ports[0] ? "not_ready" : null),
    );
    const onOld: Socket = router.stream() as Socket;
    await new Promise((resolve) => onOld.once("connect", resolve));
    leave = true;
    await router.check();
    expect(onOld.destroyed).toBe(true);
    const onNew = router.stream() as Socket;
    await new Promise((resolve) => onNew.once("connect", resolve));
    expect(onNew.remotePort).toBe(ports[1]);
    onNew.destroy();
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });
});
