import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpError, type Resource } from "@modelcontextprotocol/sdk/types.js";
import { type TaskPlansClient, WriteMode } from "@taskplans/client";
import { connectPlanService, createPlanMcpServer } from "@taskplans/mcp";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// The plans as MCP resources, read by the SDK's own client: resources/list (paged), resources/read
// (the markdown exactly, with its version), resources/templates/list.
const PAGE = 50; // RESOURCE_PAGE_SIZE

async function mcpClient(grpc: TaskPlansClient): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createPlanMcpServer({ client: grpc }).connect(serverSide);
  const client = new Client({ name: "test-host", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

const rejection = async (promise: Promise<unknown>) => {
  const error = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as McpError | null;
  return { code: error?.code, message: error?.message ?? "(resolved)" };
};

describe("plans as MCP resources", () => {
  let app: TestApp;
  let grpc: TaskPlansClient;
  let host: Client;

  beforeAll(async () => {
    app = await startTestApp("sqlite");
    grpc = connectPlanService(`127.0.0.1:${app.port}`);
    host = await mcpClient(grpc);
  });
  afterAll(async () => {
    await host.close();
    grpc.close();
    await app.stop();
  });

  it("declares resources (and no list-changed notifications it would not send)", () => {
    expect(host.getServerCapabilities()?.resources).toBeDefined();
    expect(host.getServerCapabilities()?.resources?.listChanged).toBeFalsy();
  });

  it("resources/list pages through every task with a plan, each once, with its version and size; tasks without a plan are not listed", async () => {
    const planned = new Map<string, number>();
    for (let i = 0; i < PAGE + 7; i++) {
      const taskId = await app.newTask();
      if (i % 10 === 3) continue; // a task without a plan
      const written = await app.plans.createPlan({ taskId, content: `# Plan ${i}\n\n${"x".repeat(i)}` });
      planned.set(taskId, written.plan?.version ?? 0);
    }
    const deleted = await app.newTask();
    await app.plans.createPlan({ taskId: deleted, content: "# gone" });
    await app.plans.deletePlan({ taskId: deleted });

    const seen: Resource[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await host.listResources(cursor ? { cursor } : {});
      seen.push(...page.resources);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(2);
    const byUri = new Map(seen.map((r) => [r.uri, r]));
    expect(byUri.size).toBe(seen.length);
    expect([...byUri.keys()].sort()).toEqual(
      [...planned.keys()].map((id) => `taskplans://tasks/${encodeURIComponent(id)}/plan`).sort(),
    );
    for (const [taskId, version] of planned) {
      const resource = byUri.get(`taskplans://tasks/${encodeURIComponent(taskId)}/plan`);
      const stored = (await app.plans.getPlan({ taskId })).plan;
      expect(resource).toMatchObject({
        mimeType: "text/markdown",
        size: stored?.contentBytes,
        _meta: { task_id: taskId, version },
      });
      expect(resource?.name).toContain(taskId);
    }
  });

  it("resources/read returns the plan's markdown exactly (CRLF, NUL, astral characters) with its version", async () => {
    const content = "# Plan\r\n\r\n- step \u0000 one \u{1F600}\n\u2028last  ";
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content, title: "Exact" });
    await app.plans.updatePlan({ taskId, content: "## more", mode: WriteMode.WRITE_MODE_APPEND });
    const stored = (await app.plans.getPlan({ taskId })).plan;
    const uri = `taskplans://tasks/${encodeURIComponent(taskId)}/plan`;
    const read = await host.readResource({ uri });
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]).toMatchObject({
      uri,
      mimeType: "text/markdown",
      text: stored?.content,
      _meta: { version: stored?.version, title: "Exact", content_bytes: stored?.contentBytes },
    });
    expect(stored?.version).toBe(2);
  });

  it("resources/templates/list names the plan template; a task id with / ? # % reads through it percent-encoded", async () => {
    const { resourceTemplates } = await host.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: "taskplans://tasks/{task_id}/plan", mimeType: "text/markdown" }),
    ]);
    const taskId = `${randomId("odd")}/a?b#c%d`;
    await app.tasks.createTask({ taskId, workspaceId: "ws-1" });
    await app.plans.createPlan({ taskId, content: "# odd id" });
    const uri = `taskplans://tasks/${encodeURIComponent(taskId)}/plan`;
    expect((await host.readResource({ uri })).contents[0]).toMatchObject({ text: "# odd id" });
  });

  it("a plan the task does not have, a deleted plan, a missing task and a URI of no plan are -32002 resource not found; nothing is created", async () => {
    const planless = await app.newTask();
    const deleted = await app.newTask();
    await app.plans.createPlan({ taskId: deleted, content: "# gone" });
    await app.plans.deletePlan({ taskId: deleted });
    for (const uri of [
      `taskplans://tasks/${planless}/plan`,
      `taskplans://tasks/${deleted}/plan`,
      `taskplans://tasks/${randomId("missing")}/plan`,
      "test://static-text",
      "taskplans://tasks//plan",
      "taskplans://tasks/%E0%A4%A/plan",
    ]) {
      expect([uri, await rejection(host.readResource({ uri }))]).toEqual([
        uri,
        { code: -32002, message: expect.stringMatching(/not (found|read)/i) },
      ]);
    }
    await expect(app.plans.getPlan({ taskId: planless })).rejects.toMatchObject({ code: 5 });
  });

  it("a cursor that is not one is -32602 invalid params", async () => {
    expect(await rejection(host.listResources({ cursor: "not-a-page-token" }))).toEqual({
      code: -32602,
      message: expect.stringContaining("The plan was not read"),
    });
  });
});
