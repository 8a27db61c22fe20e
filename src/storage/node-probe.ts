import { createConnection } from "mysql2";
import type { DatabaseNode } from "../config/database-url";
import { type MoveReason, nodeVerdict } from "./node-verdict";

/** Who the probe connects as (PLAN_DATABASE_URL's user and password). */
export interface NodeLogin {
  readonly user: string;
  readonly password: string;
}

/** How long a node may take to connect and answer before it counts as unreachable. */
export const PROBE_TIMEOUT_MS = 2_000;

// SHOW statements: a node that is not ready refuses every other statement (ER_UNKNOWN_COM_ERROR).
const STATUS_SQL =
  "SHOW GLOBAL VARIABLES WHERE Variable_name = 'wsrep_on';\n" +
  "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_ready', 'wsrep_local_state')";

/** The login of a MySQL URL of one host (config's databaseUrl). */
export function loginOf(url: string): NodeLogin {
  const parsed = new URL(url.replace(/^mariadb:/, "mysql:"));
  return { user: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
}

/**
 * Asks `node`, on a connection of its own (opened and closed here, so that it never reaches another
 * node), whether it can take writes (node-verdict.ts): null when it can, else why not.
 */
export function probeNode(node: DatabaseNode, login: NodeLogin): Promise<MoveReason | null> {
  return new Promise((resolve) => {
    const connection = createConnection({
      host: node.host,
      port: node.port,
      user: login.user,
      password: login.password,
      connectTimeout: PROBE_TIMEOUT_MS,
      multipleStatements: true,
    });
    let settled = false;
    const settle = (reason: MoveReason | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // An answer: a clean quit (a node logs every connection dropped without one); else dropped.
      if (reason === "unreachable") connection.destroy();
      else connection.end(() => undefined);
      resolve(reason);
    };
    // A node whose packets are dropped answers nothing: the probe gives up after its time.
    const timer = setTimeout(() => settle("unreachable"), PROBE_TIMEOUT_MS);
    connection.on("error", () => settle("unreachable"));
    connection.query(STATUS_SQL, (error, results) => {
      if (error) {
        settle("unreachable");
        return;
      }
      const status: Record<string, string> = {};
      for (const rows of results as { Variable_name: string; Value: string }[][])
        for (const row of rows) status[row.Variable_name.toLowerCase()] = String(row.Value);
      settle(nodeVerdict(status));
    });
  });
}
