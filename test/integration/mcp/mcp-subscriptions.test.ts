import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  LoggingMessageNotificationSchema,
  type McpError,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { createClient, type TaskPlansClient } from "@taskplans/client";
import { randomId } from "../../harness/servers/test-app";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { stopProcess, waitFor } from "../../harness/servers/processes";
import { freePort } from "../../harness/servers/free-port";
import { spawn, type ChildProcess } from "node:child_process";

// A host's MCP session (the SDK's client over stdio, spawning the shipped taskplans-mcp) subscribes
// to a plan and sees an agent's append arrive as notifications/resources/updated, also after the
// replica it watches through is killed and started again.
const BIN = join(__dirname, "..", "..", "..", "mcp", "dist", "main.js");
const uriOf = (taskId: string) => `taskplans://tasks/${encodeURIComponent(taskId)}/plan`;

interface Session {
  readonly client: Client;
  readonly updates: { uri: string; version?: number }[];
  readonly logs: { level: string; data: unknown }[];
}

async function stdioSession(port: number, name: string): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "--target", `127.0.0.1:${port}`],
    stderr: "ignore",
  });
  return session(transport, name);
}

async function session(transport: Transport, name: string): Promise<Session> {
  const client = new Client({ name, version: "1.0.0" });
  const updates: Session["updates"] = [];
  const logs: Session["logs"] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    const version = (n.params._meta as { version?: number } | undefined)?.version;
    updates.push({ uri: n.params.uri, ...(version === undefined ? {} : { version }) });
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push({ level: n.params.level, data: n.params.data });
  });
  await client.connect(transport);
  return { client, updates, logs };
}

const text = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((b) => ("text" in b ? b.text : "")).join("\n");

describe("resources/subscribe over a real MCP session, resumed across a replica restart", () => {
  let dir: string;
  let replica: Replica;
  let grpc: TaskPlansClient;
  let host: Session;
  let agent: Session;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mcp-subscriptions-"));
    replica = await startReplica({ PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}` }, dir);
    grpc = createClient(`127.0.0.1:${replica.port}`);
    host = await stdioSession(replica.port, "test-host");
    agent = await stdioSession(replica.port, "test-agent");
  }, 60_000);
  afterAll(async () => {
    await host?.client.close();
    await agent?.client.close();
    grpc?.close();
    await replica?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const newPlan = async (content: string) => {
    const taskId = randomId("sub");
    await grpc.tasks.createTask({ taskId, workspaceId: "ws-1" });
    if (content) await grpc.plans.createPlan({ taskId, content });
    return taskId;
  };
  const append = async (taskId: string, content: string) => {
    const result = await agent.client.callTool({
      name: "update_task_plan",
      arguments: { task_id: taskId, mode: "append", content },
    });
    expect(text(result)).toContain("Plan appended successfully");
  };
  const updatesOf = (session: Session, taskId: string) =>
    session.updates.filter((u) => u.uri === uriOf(taskId)).map((u) => u.version);
  const until = (what: string, done: () => boolean) => waitFor(what, async () => done(), 30_000);

  it("declares subscribe and logging over stdio", () => {
    expect(host.client.getServerCapabilities()).toMatchObject({
      resources: { subscribe: true },
      logging: {},
    });
  });

  it("a subscribed host sees the agent's append arrive and reads it; after the replica is killed and restarted, the next appends arrive too, each version once", async () => {
    const taskId = await newPlan("# Plan");
    await host.client.subscribeResource({ uri: uriOf(taskId) });
    await append(taskId, "## step one");
    await until("the update of version 2", () => updatesOf(host, taskId).includes(2));
    const read = await host.client.readResource({ uri: uriOf(taskId) });
    expect(read.contents[0]).toMatchObject({ text: "# Plan\n\n## step one", _meta: { version: 2 } });

    await replica.kill(); // SIGKILL: the watch stream breaks without a goodbye
    await replica.restart();
    // Written straight after the restart, likely while the subscription's watch is still backing
    // off: the resumed watch replays it (after version 2), as the change table keeps it.
    await waitFor(
      "an append through the restarted replica",
      async () => {
        await append(taskId, "## step two");
        return true;
      },
      30_000,
    );
    await append(taskId, "## step three");
    await until("the updates of versions 3 and 4", () => updatesOf(host, taskId).includes(4));
    expect(updatesOf(host, taskId)).toEqual([2, 3, 4]);
    const after = await host.client.readResource({ uri: uriOf(taskId) });
    expect(after.contents[0]).toMatchObject({ _meta: { version: 4 } });
    expect(updatesOf(agent, taskId)).toEqual([]); // the agent never subscribed
  }, 120_000);

  it("a task without a plan yet can be subscribed to: its creation is an update", async () => {
    const taskId = await newPlan("");
    await host.client.subscribeResource({ uri: uriOf(taskId) });
    const created = await agent.client.callTool({
      name: "create_task_plan",
      arguments: { task_id: taskId, content: "# First words" },
    });
    expect(text(created)).toContain("Plan created successfully");
    await until("the update of the created plan", () => updatesOf(host, taskId).length > 0);
    expect(updatesOf(host, taskId)).toEqual([1]);
  });

  it("after unsubscribe no update comes for that plan, while another subscription goes on", async () => {
    const quiet = await newPlan("# Quiet");
    const loud = await newPlan("# Loud");
    await host.client.subscribeResource({ uri: uriOf(quiet) });
    await host.client.subscribeResource({ uri: uriOf(loud) });
    await host.client.unsubscribeResource({ uri: uriOf(quiet) });
    await append(quiet, "## unseen");
    await append(loud, "## seen");
    await until("the loud plan's update", () => updatesOf(host, loud).includes(2));
    // The quiet append committed first: had its watch been open, its update would be in by now too.
    await append(loud, "## seen again");
    await until("the loud plan's second update", () => updatesOf(host, loud).includes(3));
    expect(updatesOf(host, quiet)).toEqual([]);
  });

  it("deleting the task ends the subscription with a last update and a warning saying why", async () => {
    const taskId = await newPlan("# Doomed");
    await host.client.subscribeResource({ uri: uriOf(taskId) });
    await grpc.tasks.deleteTask({ taskId });
    await until("the warning", () => host.logs.some((l) => String(l.data).includes(uriOf(taskId))));
    expect(host.logs.find((l) => String(l.data).includes(uriOf(taskId)))).toMatchObject({
      level: "warning",
      data: expect.stringContaining("Subscribe again"),
    });
    expect(updatesOf(host, taskId).length).toBeGreaterThan(0);
  });

  it("subscribing to a missing task or a URI of no plan is -32002 resource not found", async () => {
    for (const uri of [uriOf(randomId("missing")), "test://watched-resource"]) {
      const error = (await host.client.subscribeResource({ uri }).catch((e: unknown) => e)) as McpError;
      expect([uri, error.code]).toEqual([uri, -32002]);
    }
  });
  describe("over Streamable HTTP (taskplans-mcp --http): a session per host", () => {
    let mcp: ChildProcess;
    let url: URL;
    beforeAll(async () => {
      const port = await freePort();
      mcp = spawn(process.execPath, [BIN, "--target", `127.0.0.1:${replica.port}`, "--http", String(port)], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      mcp.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      await waitFor("taskplans-mcp --http", async () => stderr.includes("allowed hosts"), 15_000);
      url = new URL(`http://127.0.0.1:${port}/mcp`);
    });
    afterAll(async () => {
      if (mcp) await stopProcess(mcp);
    });

    it("an initialized host gets a session with subscribe, and sees the agent's append on its GET stream", async () => {
      const web = await session(new StreamableHTTPClientTransport(url), "web-host");
      try {
        expect(web.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
        const taskId = await newPlan("# Over HTTP");
        await web.client.subscribeResource({ uri: uriOf(taskId) });
        await append(taskId, "## seen over HTTP");
        await until("the update over HTTP", () => updatesOf(web, taskId).includes(2));
        expect(updatesOf(web, taskId)).toEqual([2]);
      } finally {
        await web.client.close();
      }
    });

    it("a session's id with another bearer token, or an unknown id, is 404 and reaches nothing", async () => {
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: "Bearer token-a" } },
      });
      const owner = await session(transport, "owner");
      try {
        const id = transport.sessionId ?? "";
        expect(id).not.toBe("");
        const call = (headers: Record<string, string>) =>
          fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": "2025-06-18",
              ...headers,
            },
            body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "resources/list" }),
          });
        expect((await call({ "mcp-session-id": id, authorization: "Bearer token-b" })).status).toBe(404);
        expect((await call({ "mcp-session-id": id })).status).toBe(404);
        expect((await call({ "mcp-session-id": "no-such-session" })).status).toBe(404);
        expect((await call({ "mcp-session-id": id, authorization: "Bearer token-a" })).status).toBe(200);
      } finally {
        await owner.client.close();
      }
    });
  });
});
