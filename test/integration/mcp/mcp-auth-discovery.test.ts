import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { SignJWT } from "jose";
import { connectPlanService, createPlanMcpServer } from "@taskplans/mcp";
import { planState } from "../../harness/model/plan-state";
import { freePort } from "../../harness/servers/free-port";
import { stopProcess, waitFor } from "../../harness/servers/processes";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// The MCP authorization spec's discovery over HTTP with auth on: RFC 9728 protected-resource
// metadata, and a WWW-Authenticate challenge on 401 naming it, read by the MCP SDK's own client code.
const BIN = join(__dirname, "..", "..", "..", "mcp", "dist", "main.js");
const SECRET = "mcp-discovery-secret-0123456789abcdef";
const ISSUER = "https://login.example";

async function startBin(servicePort: number, taskId: string, env: Record<string, string>) {
  const port = await freePort();
  const args = [BIN, "--target", `127.0.0.1:${servicePort}`, "--task-id", taskId, "--http", String(port)];
  const bin = spawn(process.execPath, args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  let stderr = "";
  bin.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await waitFor("taskplans-mcp --http", async () => stderr.includes("allowed hosts"), 15_000);
  return { bin, port };
}

const appendBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "update_task_plan", arguments: { mode: "append", content: "## injected" } },
});
const post = (port: number, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${port}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: appendBody,
  });

describe("auth discovery of taskplans-mcp --http (PLAN_MCP_AUTH_SERVERS)", () => {
  let app: TestApp;
  let token: string;
  let taskId: string;
  let mcp: { bin: ChildProcess; port: number };

  beforeAll(async () => {
    app = await startTestApp("sqlite", { env: { PLAN_AUTH_JWT_SECRET: SECRET } });
    token = await new SignJWT({ kind: "agent", name: "MCP agent", workspaces: ["ws-1"] })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("agent")
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode(SECRET));
    const owner = app.client(token);
    taskId = randomId("task");
    await owner.tasks.createTask({ taskId, workspaceId: "ws-1" });
    await owner.plans.createPlan({ taskId, content: "# Guarded plan" });
    mcp = await startBin(app.port, taskId, { PLAN_MCP_AUTH_SERVERS: ISSUER });
  });
  afterAll(async () => {
    if (mcp) await stopProcess(mcp.bin);
    await app?.stop();
  });

  const state = () => planState(app.client(token).plans, taskId);

  it("serves RFC 9728 metadata at both well-known paths, which the MCP SDK's discovery reads", async () => {
    const resource = `http://127.0.0.1:${mcp.port}/mcp`;
    const metadata = await discoverOAuthProtectedResourceMetadata(resource);
    expect(metadata).toMatchObject({
      resource,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ["header"],
    });
    const root = await fetch(`http://127.0.0.1:${mcp.port}/.well-known/oauth-protected-resource`);
    expect([root.status, await root.json()]).toEqual([200, expect.objectContaining({ resource })]);
  });

  it("a request without a token is 401 with a challenge naming the metadata; nothing changes", async () => {
    const before = await state();
    const answer = await post(mcp.port);
    expect(answer.status).toBe(401);
    const challenge = extractWWWAuthenticateParams(answer);
    expect(challenge.resourceMetadataUrl?.href).toBe(
      `http://127.0.0.1:${mcp.port}/.well-known/oauth-protected-resource/mcp`,
    );
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(await state()).toEqual(before);
  });

  it("a token the plan service refuses (wrong key, expired, garbled) is 401 invalid_token; nothing changes", async () => {
    const before = await state();
    const wrong = await new SignJWT({ kind: "agent", name: "x", workspaces: ["ws-1"] })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("agent")
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode("another-secret-0123456789abcdef-xyz"));
    const expired = await new SignJWT({ kind: "agent", name: "x", workspaces: ["ws-1"] })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("agent")
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(SECRET));
    for (const bad of [wrong, expired, "not-a-jwt"]) {
      const answer = await post(mcp.port, { authorization: `Bearer ${bad}` });
      expect(answer.status).toBe(401);
      expect(extractWWWAuthenticateParams(answer)).toMatchObject({ error: "invalid_token" });
    }
    expect(await state()).toEqual(before);
  });

  it("with a valid token the call goes through", async () => {
    const answer = await post(mcp.port, { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("Plan appended successfully");
    expect((await app.client(token).plans.getPlan({ taskId })).plan?.content).toBe(
      "# Guarded plan\n\n## injected",
    );
  });

  it("a foreign Host is 403 at the metadata too (no URL is built from it)", async () => {
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: mcp.port,
          path: "/.well-known/oauth-protected-resource",
          headers: { host: "evil.example" },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(answer).toBe(403);
  });

  it("without PLAN_MCP_AUTH_SERVERS there is no metadata and no challenge (the service's answer says how to sign in)", async () => {
    const plain = await startBin(app.port, taskId, {});
    try {
      expect(
        (await fetch(`http://127.0.0.1:${plain.port}/.well-known/oauth-protected-resource`)).status,
      ).toBe(404);
      const answer = await post(plain.port);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain("reason=TOKEN_MISSING");
    } finally {
      await stopProcess(plain.bin);
    }
  });
  it("with a token, resources are the plans its workspaces reach: another workspace's plan is neither listed nor readable nor subscribable (-32002, as a missing one)", async () => {
    const other = await new SignJWT({ kind: "agent", name: "other", workspaces: ["ws-2"] })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("other")
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode(SECRET));
    const hidden = randomId("hidden");
    await app.client(other).tasks.createTask({ taskId: hidden, workspaceId: "ws-2" });
    await app.client(other).plans.createPlan({ taskId: hidden, content: "# Not yours" });
    const grpc = connectPlanService(`127.0.0.1:${app.port}`);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createPlanMcpServer({ client: grpc, token }).connect(serverSide);
    const host = new Client({ name: "host", version: "1.0.0" });
    await host.connect(clientSide);
    try {
      const listed = (await host.listResources()).resources.map((r) => r.uri);
      expect(listed).toContain(`taskplans://tasks/${taskId}/plan`);
      expect(listed).not.toContain(`taskplans://tasks/${hidden}/plan`);
      const uri = `taskplans://tasks/${hidden}/plan`;
      const read = (await host.readResource({ uri }).catch((e: unknown) => e)) as McpError;
      const subscribed = (await host.subscribeResource({ uri }).catch((e: unknown) => e)) as McpError;
      expect([read.code, subscribed.code]).toEqual([-32002, -32002]);
      expect(read.message).not.toContain("Not yours");
    } finally {
      await host.close();
      grpc.close();
    }
  });
});
