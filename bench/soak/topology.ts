import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "mysql2/promise";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startRedisNodes } from "../../test/harness/databases/redis";
import { type DatabaseProbe, mariadbProbe, sqliteProbe } from "./database";
import { type ServerProcess, startServer } from "./server";
import { serverEnv } from "./settings";
import type { SoakSettings, TopologyName } from "./types";

/**
 * What a soak stops on the way out, newest first: exactly the processes and directories it made.
 * Signal handlers and failures run the same list.
 */
export class Cleanup {
  private readonly steps: { what: string; run: () => Promise<void> }[] = [];

  add(what: string, run: () => Promise<void>): void {
    this.steps.push({ what, run });
  }

  async runAll(): Promise<void> {
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      await step.run().catch((error: unknown) => {
        process.stderr.write(`soak: cleanup of ${step?.what} failed: ${String(error)}\n`);
      });
    }
  }
}

/** A running deployment under soak. */
export interface Topology {
  readonly name: TopologyName;
  readonly servers: readonly ServerProcess[];
  readonly database: DatabaseProbe;
  /** Lines for the settings header (what runs where). */
  readonly describe: readonly string[];
}

/** Starts the topology; everything started is registered in `cleanup` as soon as it runs. */
export async function startTopology(
  name: TopologyName,
  settings: SoakSettings,
  cleanup: Cleanup,
): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), `taskplans-soak-${name}-`));
  cleanup.add(`temp dir ${dir}`, async () => rmSync(dir, { recursive: true, force: true }));
  const base = { main: settings.serverMain, logDir: dir };
  const env = serverEnv(settings);
  const command = `node ${settings.serverMain} (cwd ${settings.repoRoot})`;
  if (name === "embedded") {
    const file = join(dir, "plans.sqlite");
    const server = await startServer({
      ...base,
      name: "embedded",
      env: { ...env, PLAN_DATABASE_URL: `sqlite:${file}` },
    });
    cleanup.add(`server pid ${server.pid}`, () => server.stop());
    const database = sqliteProbe(file);
    cleanup.add("sqlite probe", () => database.close());
    return {
      name,
      servers: [server],
      database,
      describe: [
        `1 server: ${command}, pid ${server.pid}, gRPC ${server.port}, metrics ${server.metricsPort}`,
        `database: ${file}`,
      ],
    };
  }

  let port = settings.mariadbPort;
  let mariadbNote = `MariaDB already running on ${port} (SOAK_MARIADB_PORT)`;
  if (port === null) {
    const mariadb = await startMariaDb();
    cleanup.add(`mariadbd pid ${mariadb.pid}`, () => mariadb.stop());
    port = mariadb.port;
    mariadbNote = `throwaway MariaDB pid ${mariadb.pid} on ${port} (test settings: no flush at commit)`;
  }
  const database = `soak_${randomBytes(4).toString("hex")}`;
  await createDatabase(port, database);
  const mariadbPort = port;
  cleanup.add(`database ${database}`, async () => {
    const connection = await createConnection({ host: "127.0.0.1", port: mariadbPort, user: "root" });
    await connection.query(`DROP DATABASE \`${database}\``).finally(() => connection.end());
  });
  const nodes = await startRedisNodes(3);
  for (const node of nodes) cleanup.add(`redis-server pid ${node.pid}`, () => node.stop());
  const replicaEnv = {
    ...env,
    PLAN_DATABASE_URL: `mysql://root@127.0.0.1:${port}/${database}`,
    PLAN_REDIS_URLS: nodes.map((node) => node.url).join(","),
  };
  const servers: ServerProcess[] = [];
  for (const replica of ["replica-a", "replica-b"]) {
    const server = await startServer({ ...base, name: replica, env: replicaEnv });
    cleanup.add(`server pid ${server.pid}`, () => server.stop());
    servers.push(server);
  }
  const probe = await mariadbProbe(port, database);
  cleanup.add("mariadb probe", () => probe.close());
  return {
    name,
    servers,
    database: probe,
    describe: [
      ...servers.map((s) => `${s.name}: ${command}, pid ${s.pid}, gRPC ${s.port}, metrics ${s.metricsPort}`),
      `database: ${mariadbNote}, database ${database}`,
      `lock: 3 throwaway redis-servers (pids ${nodes.map((n) => n.pid).join(", ")}) in PLAN_REDIS_URLS`,
    ],
  };
}
