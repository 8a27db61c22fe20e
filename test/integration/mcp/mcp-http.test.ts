import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskPlansClient } from "@taskplans/client";
import { MAX_BODY_BYTES, startMcpHttpServer } from "@taskplans/mcp";
import { connectPlanService } from "@taskplans/mcp";
import { freePort } from "../../harness/servers/free-port";
import { makeCa } from "../../harness/identity/pki";
import { deeplyNestedToolCalls } from "../../harness/calls/nested-tool-calls";
import { planState } from "../../harness/model/plan-state";
import { stopProcess, waitFor } from "../../harness/servers/processes";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// DNS rebinding: a web page on evil.example whose name resolves to 127.0.0.1 makes the operator's
// browser send requests to a local `taskplans-mcp --http` with Host and Origin naming evil.example.
// With auth off (the default) those requests must not reach the tools.

interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

function post(
  port: number,
  headers: Record<string, string>,
  body: string | Buffer,
  ca: Buffer | null = null,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const send = ca ? httpsRequest : request;
    const req = send(
      {
        ...(ca ? { ca } : {}),
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The shipped command (mcp/dist/main.js, `npm run build:packages`) serving HTTP on `port` for `taskId`; its stderr so far. */
function startMcpCommand(
  servicePort: number,
  taskId: string,
  port: number,
  extra: string[],
  env: Record<string, string> = {},
): { bin: ChildProcess; stderr: () => string } {
  const main = join(__dirname, "..", "..", "..", "mcp", "dist", "main.js");
  const args = [
    main,
    "--target",
    `127.0.0.1:${servicePort}`,
    "--task-id",
    taskId,
    "--http",
    String(port),
    ...extra,
  ];
  const bin = spawn(process.execPath, args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  let stderr = "";
  bin.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return { bin, stderr: () => stderr };
}

const appendCall = (content: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "update_task_plan", arguments: { mode: "append", content } },
  });

describe("MCP over HTTP: Host and Origin allow-list, body limit", () => {
  let app: TestApp;
  let grpc: TaskPlansClient;
  let taskId: string;
  let mcp: Awaited<ReturnType<typeof startMcpHttpServer>>;

  beforeAll(async () => {
    app = await startTestApp("sqlite");
    taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan" });
    grpc = connectPlanService(`127.0.0.1:${app.port}`);
    mcp = await startMcpHttpServer({ client: grpc, taskId, host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await mcp.close();
    grpc.close();
    await app.stop();
  });

  it.each([
    ["a foreign Host and Origin (the rebinding attack)", "evil.example", "http://evil.example"],
    ["the right Host with a foreign Origin", "127.0.0.1", "http://evil.example"],
    ["a foreign Host without Origin", "evil.example", null],
  ])("%s is 403 and changes nothing", async (_name, host, origin) => {
    const before = await planState(app.plans, taskId);
    const headers: Record<string, string> = { host: `${host}:${mcp.port}` };
    if (origin) headers.origin = `${origin}:${mcp.port}`;
    const answer = await post(mcp.port, headers, appendCall("## injected"));
    expect(answer.status).toBe(403);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("the loopback names of the bound port are allowed, with or without an Origin", async () => {
    expect(mcp.allow.hosts).toEqual([`127.0.0.1:${mcp.port}`, `localhost:${mcp.port}`, `[::1]:${mcp.port}`]);
    const local = await post(
      mcp.port,
      { host: `localhost:${mcp.port}`, origin: `http://localhost:${mcp.port}` },
      appendCall("## one"),
    );
    expect([local.status, local.body]).toEqual([200, expect.stringContaining("Plan appended successfully")]);
    const noOrigin = await post(mcp.port, { host: `127.0.0.1:${mcp.port}` }, appendCall("## two"));
    expect(noOrigin.status).toBe(200);
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("# Plan\n\n## one\n\n## two");
  });

  it("a body over the limit is 413 (not a reset connection) and changes nothing", async () => {
    const before = await planState(app.plans, taskId);
    const answer = await post(
      mcp.port,
      { host: `127.0.0.1:${mcp.port}` },
      appendCall("x".repeat(MAX_BODY_BYTES)),
    );
    expect(answer.status).toBe(413);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("tool arguments nested 500,000 levels deep are JSON-RPC -32602 in one short line and change nothing; the server goes on", async () => {
    const before = await planState(app.plans, taskId);
    const host = { host: `127.0.0.1:${mcp.port}` };
    for (const body of deeplyNestedToolCalls(500_000)) {
      const answer = await post(mcp.port, host, body);
      expect(answer.status).toBe(200);
      const { error } = JSON.parse(answer.body) as { error?: { code: number; message: string } };
      expect(error?.code).toBe(-32602);
      expect(error?.message).toMatch(/^Invalid params: /);
      expect(error?.message.length).toBeLessThan(200); // no schema or validation dump
    }
    expect(await planState(app.plans, taskId)).toEqual(before);
    const read = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "get_task_plan", arguments: {} },
    });
    const still = await post(mcp.port, host, read);
    expect([still.status, still.body]).toEqual([200, expect.stringContaining("Plan metadata")]);
  });

  it("the shipped command takes a configured allow-list (--allowed-hosts, --allowed-origins)", async () => {
    const port = await freePort();
    const { bin, stderr } = startMcpCommand(app.port, taskId, port, [
      "--allowed-hosts",
      `plans.internal:${port}`,
      "--allowed-origins",
      `https://editor.example`,
    ]);
    try {
      await waitFor("taskplans-mcp --http", async () => stderr().includes("allowed hosts"), 10_000);
      expect(stderr()).toContain(`allowed hosts: plans.internal:${port}`);
      const allowed = await post(
        port,
        { host: `plans.internal:${port}`, origin: "https://editor.example" },
        appendCall("## three"),
      );
      expect(allowed.status).toBe(200);
      const loopback = await post(port, { host: `127.0.0.1:${port}` }, appendCall("## four"));
      expect(loopback.status).toBe(403); // the list replaces the defaults
      expect((await app.plans.getPlan({ taskId })).plan?.content).toMatch(/## three$/);
    } finally {
      await stopProcess(bin);
    }
  });
});

describe("the shipped command over TLS: HTTPS for its callers, mTLS to the plan service", () => {
  it("serves /mcp over HTTPS (PLAN_MCP_TLS_*) and reaches an mTLS-only plan service (PLAN_MCP_TARGET_*)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "taskplans-mcp-tls-"));
    const ca = makeCa(dir, "ca");
    const service = ca.issue("service", { names: ["plans.internal"] });
    const caller = ca.issue("mcp");
    const mcpCert = ca.issue("mcp-http");
    const app = await startTestApp("sqlite", {
      env: {
        PLAN_GRPC_TLS_CERT_FILE: service.certFile,
        PLAN_GRPC_TLS_KEY_FILE: service.keyFile,
        PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
      },
    });
    const port = await freePort();
    const grpc = connectPlanService(`127.0.0.1:${app.port}`, {
      tls: {
        caFile: ca.certFile,
        certFile: caller.certFile,
        keyFile: caller.keyFile,
        serverName: "plans.internal",
      },
    });
    const taskId = `mcp-tls-${port}`;
    await grpc.tasks.createTask({ taskId, workspaceId: "ws-1" });
    await grpc.plans.createPlan({ taskId, content: "# Plan" });
    const { bin, stderr } = startMcpCommand(app.port, taskId, port, [], {
      PLAN_MCP_TLS_CERT_FILE: mcpCert.certFile,
      PLAN_MCP_TLS_KEY_FILE: mcpCert.keyFile,
      PLAN_MCP_TARGET_CA_FILE: ca.certFile,
      PLAN_MCP_TARGET_CERT_FILE: caller.certFile,
      PLAN_MCP_TARGET_KEY_FILE: caller.keyFile,
      PLAN_MCP_TARGET_SERVER_NAME: "plans.internal",
    });
    try {
      await waitFor("taskplans-mcp --http over TLS", async () => stderr().includes("allowed hosts"), 10_000);
      expect(stderr()).toContain("Streamable HTTPS");
      const host = { host: `127.0.0.1:${port}`, origin: `https://127.0.0.1:${port}` };
      const appended = await post(port, host, appendCall("## over TLS"), readFileSync(ca.certFile));
      expect(appended.status).toBe(200);
      expect(appended.body).not.toContain('isError":true');
      expect((await grpc.plans.getPlan({ taskId })).plan?.content).toBe("# Plan\n\n## over TLS");
      await expect(post(port, host, appendCall("## plaintext"))).rejects.toThrow(); // HTTP to an HTTPS port
    } finally {
      await stopProcess(bin);
      grpc.close();
      await app.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
