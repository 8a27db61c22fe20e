import { connect, type Socket } from "node:net";
import type { DatabaseNode } from "../config/database-url";
import { probeNode, type NodeLogin } from "./node-probe";
import type { MoveReason } from "./node-verdict";

/** What a replica hears when it moves to another node. */
export interface NodeMoves {
  onMove(from: DatabaseNode, to: DatabaseNode, reason: MoveReason): void;
}

/** No node named in PLAN_DATABASE_URL can take the service's statements now. */
export class NoUsableNodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoUsableNodeError";
  }
}

/** `host:port`, as the metrics and logs name a node. */
export function nodeLabel(node: DatabaseNode): string {
  return node.host.includes(":") ? `[${node.host}]:${node.port}` : `${node.host}:${node.port}`;
}

/**
 * The nodes of a Galera cluster a replica may talk to, and the one it talks to now. Every connection
 * of the data source's pool is opened through `stream` (mysql2's socket factory), to the current
 * node. `check` (the health monitor's, every PLAN_HEALTH_INTERVAL_MS) asks the current node whether
 * it can take writes (node-verdict.ts: in the primary component, ready and Synced); when it cannot,
 * the first other node that can becomes current, and every socket to the old one is destroyed, so
 * that no pooled connection keeps writing through a node that died or left the primary component
 * (a transaction in flight there fails as on a lost connection: before its COMMIT nothing is
 * written, with it the outcome is unknown, storage-errors.ts). It does not move back by itself.
 */
export class DatabaseNodes {
  private index = 0;
  private readonly sockets: Set<Socket>[];

  constructor(
    private readonly nodes: readonly DatabaseNode[],
    private readonly login: NodeLogin,
    private readonly moves: NodeMoves,
    private readonly probe: (node: DatabaseNode, login: NodeLogin) => Promise<MoveReason | null> = probeNode,
  ) {
    if (nodes.length === 0) throw new Error("a database node list is never empty");
    this.sockets = nodes.map(() => new Set<Socket>());
  }

  /** The node the pool's connections go to now. */
  get current(): DatabaseNode {
    return this.nodes[this.index] as DatabaseNode;
  }

  /** Opens a socket to the current node (the pool's `stream` option), tracked until it closes. */
  readonly stream = (): Socket => {
    const sockets = this.sockets[this.index] as Set<Socket>;
    const socket = connect(this.current.port, this.current.host);
    socket.setNoDelay(true); // as mysql2 sets on a socket of its own
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    return socket;
  };

  /**
   * Resolves when the current node can take writes, after moving to another one that can if it
   * cannot; throws NoUsableNodeError when none can (readiness then reports NOT_SERVING).
   */
  async check(): Promise<void> {
    const reason = await this.probe(this.current, this.login);
    if (reason === null) return;
    const refused = [`${nodeLabel(this.current)} ${reason}`];
    for (let step = 1; step < this.nodes.length; step++) {
      const candidate = (this.index + step) % this.nodes.length;
      const node = this.nodes[candidate] as DatabaseNode;
      const other = await this.probe(node, this.login);
      if (other === null) {
        this.moveTo(candidate, reason);
        return;
      }
      refused.push(`${nodeLabel(node)} ${other}`);
    }
    throw new NoUsableNodeError(`no database node can take writes: ${refused.join(", ")}`);
  }

  private moveTo(candidate: number, reason: MoveReason): void {
    const from = this.current;
    const old = this.sockets[this.index] as Set<Socket>;
    this.index = candidate;
    for (const socket of old) socket.destroy();
    old.clear();
    this.moves.onMove(from, this.current, reason);
  }
}
