import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TaskPlansClient } from "@taskplans/client";
import { connectPlanService, startMcpHttpServer } from "@taskplans/mcp";
import { waitFor } from "../../harness/servers/processes";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The HTTP sessions are bounded: past the most held at once an initialize is served without a
// session (no subscribe), and a session left idle is closed.
describe("MCP over HTTP: session bounds", () => {
  let app: TestApp;
  let grpc: TaskPlansClient;

  beforeAll(async () => {
    app = await startTestApp("sqlite");
    grpc = connectPlanService(`127.0.0.1:${app.port}`);
  });
  afterAll(async () => {
    grpc.close();
    await app.stop();
  });

  const connect = async (url: URL) => {
    const transport = new StreamableHTTPClientTransport(url);
    const client = new Client({ name: "host", version: "1.0.0" });
    await client.connect(transport);
    return { client, transport };
  };

  it("past the most sessions, an initialize is served alone (no session id, no subscribe); ending a session frees its place", async () => {
    const mcp = await startMcpHttpServer({ client: grpc, host: "127.0.0.1", port: 0, sessions: { max: 1 } });
    const url = new URL(`http://127.0.0.1:${mcp.port}/mcp`);
    try {
      const first = await connect(url);
      expect(first.transport.sessionId).toBeDefined();
      expect(first.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      const second = await connect(url);
      expect(second.transport.sessionId).toBeUndefined();
      expect(second.client.getServerCapabilities()?.resources?.subscribe).toBeUndefined();
      expect((await second.client.listTools()).tools.length).toBeGreaterThan(0); // still served
      expect(mcp.sessions()).toBe(1);
      await first.transport.terminateSession(); // DELETE /mcp
      await first.client.close();
      expect(mcp.sessions()).toBe(0);
      const third = await connect(url);
      expect(third.transport.sessionId).toBeDefined();
      await third.client.close();
      await second.client.close();
    } finally {
      await mcp.close();
    }
  });

  it("a session with no request and no open stream is closed after the idle time; its id is then 404", async () => {
    const mcp = await startMcpHttpServer({
      client: grpc,
      host: "127.0.0.1",
      port: 0,
      sessions: { idleMs: 200 },
    });
    const url = new URL(`http://127.0.0.1:${mcp.port}/mcp`);
    try {
      // A raw initialize: no GET stream is opened, so nothing keeps the session alive.
      const init = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        }),
      });
      const id = init.headers.get("mcp-session-id") ?? "";
      expect([init.status, id]).toEqual([200, expect.stringMatching(/\S/)]);
      expect(mcp.sessions()).toBe(1);
      await waitFor("the idle session to close", async () => mcp.sessions() === 0, 10_000);
      const late = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": id,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      expect(late.status).toBe(404);
    } finally {
      await mcp.close();
    }
  });
});
