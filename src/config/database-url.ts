import { ConfigError } from "@taskplans/tls";

/** One MySQL/MariaDB server a replica may talk to (a Galera node). */
export interface DatabaseNode {
  readonly host: string;
  readonly port: number;
}

/** What PLAN_DATABASE_URL names. */
export interface DatabaseTarget {
  /** The URL with one host, the first node (what the data source and the tools are given). */
  readonly url: string;
  /** MySQL: every node it names, in order (one for a single server); SQLite: none. */
  readonly nodes: readonly DatabaseNode[];
}

const DEFAULT_PORT = 3306;

/**
 * Reads PLAN_DATABASE_URL. A MySQL URL may name several nodes of one Galera cluster, separated by
 * commas in its host part, as the MariaDB connectors write a failover list:
 * `mysql://user:pass@db-0:3306,db-1:3306,db-2:3306/taskplans`. They share the user, the password,
 * the database and the parameters. Pure.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const match = /^((?:mysql|mariadb):\/\/(?:[^@/]*@)?)([^/?#]*)(.*)$/.exec(url);
  if (!match) return { url, nodes: [] };
  const [, head = "", hosts = "", tail = ""] = match;
  const nodes = hosts.split(",").map((entry) => nodeOf(entry.trim()));
  const [first] = nodes;
  if (!first) throw new ConfigError("invalid configuration: PLAN_DATABASE_URL names no host");
  const seen = new Set(nodes.map((n) => `${n.host}:${n.port}`));
  if (seen.size !== nodes.length)
    throw new ConfigError("invalid configuration: PLAN_DATABASE_URL names a node twice");
  return { url: nodes.length === 1 ? url : `${head}${hosts.split(",")[0]?.trim() ?? ""}${tail}`, nodes };
}

function nodeOf(entry: string): DatabaseNode {
  // host, host:port, [v6], [v6]:port
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
  if (!match?.[1])
    throw new ConfigError(`invalid configuration: PLAN_DATABASE_URL: '${entry}' is not host or host:port`);
  const port = match[2] === undefined ? DEFAULT_PORT : Number(match[2]);
  if (port < 1 || port > 65_535)
    throw new ConfigError(`invalid configuration: PLAN_DATABASE_URL: port ${port} out of range`);
  return { host: match[1].replace(/^\[|\]$/g, ""), port };
}
