import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The MCP tools say the checklist progress the service counted (issue 56, item 3): the taskplans-mcp
// bin over stdio, as a host runs it, against a real server. A write's acknowledgement ends with
// "Checklist: N of M items done." (nothing for a plan without boxes); get_task_plan's metadata, the
// revision list and resources/list's _meta carry checklist {checked, total}.

const PLAN = "# P\n\n- [x] a\n- [ ] b\n- [ ] c\n";
const BIN = join(__dirname, "..", "..", "..", "mcp", "dist", "main.js");
const text = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((b) => ("text" in b ? b.text : "")).join("\n");
// The JSON of a tool answer's first block ("Plan metadata:\n{...}").
function metadataOf(result: unknown): Record<string, unknown> {
  const [first] = (result as CallToolResult).content ?? [];
  const block = first && "text" in first ? first.text : "";
  return JSON.parse(block.slice(block.indexOf("\n") + 1)) as Record<string, unknown>;
}

describe("the MCP tools with a plan's checklist progress (stdio bin, real server)", () => {
  let app: TestApp;
  const clients: Client[] = [];

  beforeAll(async () => {
    app = await startTestApp("sqlite");
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await app?.stop();
  });

  async function agentFor(taskId: string): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "--target", `127.0.0.1:${app.port}`, "--task-id", taskId],
      env: { PATH: process.env.PATH ?? "" },
      stderr: "ignore",
    });
    const client = new Client({ name: "stdio-agent", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  it("create says 1 of 3, a tick says 2 of 3; the read, the revisions and the resource carry the figure", async () => {
    const taskId = await app.newTask();
    const agent = await agentFor(taskId);
    const created = text(
      await agent.callTool({ name: "create_task_plan", arguments: { content: PLAN, title: "P" } }),
    );
    expect(created).toBe(
      `Plan created successfully: task_id=${taskId}, title="P", ${Buffer.byteLength(PLAN)} bytes, version=1. Checklist: 1 of 3 items done. Content omitted; read it with get_task_plan.`,
    );
    const edited = text(
      await agent.callTool({
        name: "edit_task_plan",
        arguments: { expected_version: 1, old_text: "- [ ] b", new_text: "- [x] b" },
      }),
    );
    expect(edited).toMatch(/version=2\. Checklist: 2 of 3 items done\. Content omitted;/);

    const read = await agent.callTool({ name: "get_task_plan", arguments: {} });
    expect(metadataOf(read)).toMatchObject({
      version: 2,
      checklist: { checked: 2, total: 3 },
    });
    const revisions = metadataOf(await agent.callTool({ name: "list_task_plan_revisions", arguments: {} }))
      .revisions as { revisionNumber: number; checklist?: unknown }[];
    // The same agent wrote twice in a row: the edit coalesced into revision 1, which now holds 2 of 3.
    expect(revisions.map((r) => [r.revisionNumber, r.checklist])).toEqual([[1, { checked: 2, total: 3 }]]);
    const listed = (await agent.listResources()).resources.find((r) => r.uri.includes(taskId));
    expect(listed?._meta).toMatchObject({ version: 2, checklist: { checked: 2, total: 3 } });
  });

  it("a plan without boxes: the acknowledgements say nothing of a checklist, the metadata says 0 of 0", async () => {
    const taskId = await app.newTask();
    const agent = await agentFor(taskId);
    const created = text(
      await agent.callTool({ name: "create_task_plan", arguments: { content: "# P\n\n- a\n", title: "P" } }),
    );
    expect(created).toBe(
      `Plan created successfully: task_id=${taskId}, title="P", 9 bytes, version=1. Content omitted; read it with get_task_plan.`,
    );
    const appended = text(
      await agent.callTool({ name: "update_task_plan", arguments: { mode: "append", content: "- b" } }),
    );
    expect(appended).not.toContain("Checklist");
    const read = await agent.callTool({ name: "get_task_plan", arguments: {} });
    expect(metadataOf(read).checklist).toEqual({ checked: 0, total: 0 });
    // An append that adds the first box: the acknowledgement says so.
    const boxed = text(
      await agent.callTool({ name: "update_task_plan", arguments: { mode: "append", content: "- [ ] c" } }),
    );
    expect(boxed).toMatch(/version=3\. Checklist: 0 of 1 items done\. /);
  });
});
