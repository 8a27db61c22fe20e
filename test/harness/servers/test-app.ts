import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { type AppOverrides, startApp } from "../../../src/app";
import { loadConfig } from "../../../src/config/config";
import { type Clients, connect } from "../calls/rpc";
import { connectOverHttp, type Transport } from "../calls/connect-clients";
import { createDatabase } from "../databases/mariadb";
import { RecordingEventSink } from "../fixtures/recording-event-sink";

/** The databases every storage-touching test runs against. */
export type TestDialect = "sqlite" | "mysql";

/** The databases the server tests run on, labelled by the engine that runs (MySQL dialect: MariaDB). */
export const DATABASES: readonly { readonly label: string; readonly dialect: TestDialect }[] = [
  { label: "SQLite", dialect: "sqlite" },
  { label: "MariaDB", dialect: "mysql" },
];

/**
 * A real server on 127.0.0.1:0 with its own database, and clients connected to it: the client
 * package over gRPC, or (transport "connect") the same API over Connect JSON on the HTTP listener.
 */
export interface TestApp extends Clients {
  readonly port: number;
  /** The HTTP listener's port (Connect, gRPC-Web, the console). */
  readonly httpPort: number;
  readonly transport: Transport;
  readonly metricsPort: number | null;
  readonly dialect: TestDialect;
  readonly databaseUrl: string;
  readonly events: RecordingEventSink;
  /** Creates a task with a random id (tests never share tasks). */
  newTask(workspaceId?: string): Promise<string>;
  /** A new task with a plan created by an agent: its id, the plan's version and its first revision. */
  planWith(content: string, title?: string): Promise<{ taskId: string; version: number; revisionId: string }>;
  /** A client with its own connection (for concurrency tests), optionally with a bearer token. */
  client(token?: string): Clients;
  stop(): Promise<void>;
}

/** A random id, unique per call. */
export function randomId(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/** Starts a server for `dialect` (a fresh SQLite file, or a fresh database on the test MariaDB). */
export async function startTestApp(
  dialect: TestDialect,
  options: { env?: Record<string, string>; overrides?: AppOverrides; transport?: Transport } = {},
): Promise<TestApp> {
  const tempDir = mkdtempSync(join(tmpdir(), "taskplans-test-"));
  let databaseUrl = `sqlite:${join(tempDir, "plans.sqlite")}`;
  if (dialect === "mysql") {
    const port = Number(process.env.TEST_MARIADB_PORT);
    if (!port)
      throw new Error("TEST_MARIADB_PORT is not set: run integration tests through jest's global setup");
    const database = `t_${randomBytes(6).toString("hex")}`;
    await createDatabase(port, database);
    databaseUrl = `mysql://root@127.0.0.1:${port}/${database}`;
  }
  const config = loadConfig({
    PLAN_GRPC_ADDRESS: "127.0.0.1:0",
    PLAN_DATABASE_URL: databaseUrl,
    PLAN_LOG_LEVEL: "silent",
    PLAN_METRICS_ADDRESS: "127.0.0.1:0",
    PLAN_HTTP_ADDRESS: "127.0.0.1:0",
    // Suites drive many writes from one address; the rate-limit tests turn it on.
    PLAN_RATE_LIMIT_WRITES: "0",
    ...options.env,
  });
  const events = new RecordingEventSink();
  const app = await startApp(config, { logger: pino({ level: "silent" }), events, ...options.overrides });
  const transport = options.transport ?? "grpc";
  const httpPort = app.httpPort ?? 0;
  const clientOf = (token?: string) =>
    transport === "connect" ? connectOverHttp(httpPort, token) : connect(app.port, token);
  const clients = clientOf();
  const extra: Clients[] = [];
  const newTask = async (workspaceId = "ws-1") => {
    const taskId = randomId("task");
    await clients.tasks.createTask({ taskId, workspaceId, title: "a task" });
    return taskId;
  };
  return {
    ...clients,
    port: app.port,
    httpPort,
    transport,
    metricsPort: app.metricsPort,
    dialect,
    databaseUrl: config.databaseUrl,
    events,
    newTask,
    async planWith(content: string, title?: string) {
      const taskId = await newTask();
      const created = await clients.plans.createPlan({ taskId, content, title });
      return { taskId, version: created.plan?.version ?? 0, revisionId: created.revision?.id ?? "" };
    },
    client(token?: string) {
      const client = clientOf(token);
      extra.push(client);
      return client;
    },
    async stop() {
      clients.close();
      for (const client of extra) client.close();
      await app.stop();
      rmSync(tempDir, { recursive: true, force: true });
    },
  };
}
