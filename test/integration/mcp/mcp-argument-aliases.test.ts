import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TaskPlansClient } from "@taskplans/client";
import { connectPlanService, createPlanMcpServer } from "@taskplans/mcp";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The argument names agents use (issue 56, item 4), through a real MCP client against the real MCP
// server and plan service: each alias works, a conflicting pair and an unknown name are refused with
// the plan, its version and its revision count unchanged.

const text = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((b) => ("text" in b ? b.text : "")).join("\n");

describe("MCP tools accept the argument names agents use", () => {
  let app: TestApp;
  let grpc: TaskPlansClient;
  let agent: Client;
  let taskId: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite");
    grpc = connectPlanService(`127.0.0.1:${app.port}`);
  });
  afterAll(async () => {
    grpc.close();
    await app.stop();
  });
  beforeEach(async () => {
    taskId = await app.newTask();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createPlanMcpServer({ client: grpc, taskId }).connect(serverSide);
    agent = new Client({ name: "alias-agent", version: "1.0.0" });
    await agent.connect(clientSide);
  });
  afterEach(() => agent.close());

  const call = (name: string, args: Record<string, unknown>) => agent.callTool({ name, arguments: args });
  const content = async () => (await app.plans.getPlan({ taskId })).plan?.content;
  // What a refusal must leave as it was: the content, the version and the number of revisions.
  const state = async () => {
    const plan = (await app.plans.getPlan({ taskId })).plan;
    const revisions = (await app.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions.length;
    return { content: plan?.content, version: plan?.version, revisions };
  };
  const checklist = "# Plan\n\n- [ ] a\n- [ ] b\n";

  it.each([
    ["old_string", "new_string"],
    ["old_str", "new_str"],
    ["oldString", "newString"],
    ["oldText", "newText"],
  ])("edit_task_plan with %s/%s edits the plan", async (oldName, newName) => {
    await call("create_task_plan", { content: checklist });
    const edited = await call("edit_task_plan", {
      expected_version: 1,
      [oldName]: "- [ ] a",
      [newName]: "- [x] a",
    });
    expect(edited.isError).toBeFalsy();
    expect(text(edited)).toMatch(/^Plan edited successfully: .*version=2\./);
    expect(await content()).toBe("# Plan\n\n- [x] a\n- [ ] b\n");
  });

  it("camelCase names work in every kind of tool: taskId, expectedVersion, requestId, sinceVersion, revisionId, pageSize", async () => {
    const other = await app.newTask();
    expect(text(await call("create_task_plan", { taskId: other, content: checklist }))).toMatch(
      new RegExp(`^Plan created successfully: task_id=${other},`),
    );
    const replaced = await call("update_task_plan", {
      taskId: other,
      content: `${checklist}- [ ] c\n`,
      expectedVersion: 1,
      requestId: "alias-replace-1",
    });
    expect(text(replaced)).toMatch(/^Plan replaced successfully: .*version=2\./);
    // A stale expectedVersion is checked, not dropped: the alias reaches the service.
    const stale = await call("edit_task_plan", {
      taskId: other,
      expectedVersion: 1,
      oldString: "- [ ] c",
      newString: "- [x] c",
    });
    expect([stale.isError, text(stale)]).toEqual([true, expect.stringMatching(/VERSION_MISMATCH/)]);
    expect(text(await call("get_task_plan_changes", { taskId: other, sinceVersion: 1 }))).toMatch(
      /^Plan changes since version 1: now version 2/,
    );
    const listed = text(await call("list_task_plan_revisions", { taskId: other, pageSize: 1 }));
    const revisions = JSON.parse(listed.replace(/^Plan revisions:\n/, "")).revisions;
    expect(revisions).toHaveLength(1);
    const revision = await call("get_task_plan_revision", { taskId: other, revisionId: revisions[0].id });
    expect(text(revision)).toContain("- [ ] c");
    expect((await app.plans.getPlan({ taskId: other })).plan?.content).toBe(`${checklist}- [ ] c\n`);
  });

  it("the canonical name and an alias with equal values are taken once", async () => {
    await call("create_task_plan", { content: checklist });
    const edited = await call("edit_task_plan", {
      expected_version: 1,
      expectedVersion: 1,
      old_text: "- [ ] b",
      old_string: "- [ ] b",
      new_str: "- [x] b",
    });
    expect(text(edited)).toMatch(/^Plan edited successfully: .*version=2\./);
    expect(await content()).toBe("# Plan\n\n- [ ] a\n- [x] b\n");
  });

  it.each([
    [
      "old_text and old_string",
      { expected_version: 1, old_text: "- [ ] a", old_string: "- [ ] b", new_text: "- [x] a" },
      /old_text and old_string name the same argument \(old_text\) but have different values; pass it once, as old_text/,
    ],
    [
      "new_string and new_str",
      { expected_version: 1, old_text: "- [ ] a", new_string: "- [x] a", new_str: "- [-] a" },
      /new_string and new_str name the same argument \(new_text\) but have different values/,
    ],
    [
      "expected_version and expectedVersion",
      { expected_version: 1, expectedVersion: 2, old_text: "- [ ] a", new_text: "- [x] a" },
      /expected_version and expectedVersion name the same argument \(expected_version\)/,
    ],
  ])("a conflicting pair (%s) is refused naming both, with nothing written", async (_, args, message) => {
    await call("create_task_plan", { content: checklist });
    const before = await state();
    const refused = await call("edit_task_plan", args);
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^edit_task_plan did not run, so the plan was not read or changed/);
    expect(text(refused)).toMatch(message);
    expect(text(refused)).toMatch(/reason=CONFLICTING_ARGUMENTS; next_action=/);
    expect(await state()).toEqual(before);
    expect(before).toEqual({ content: checklist, version: 1, revisions: 1 });
  });

  it("an unknown name is refused naming the accepted arguments and that aliases exist, with nothing written", async () => {
    await call("create_task_plan", { content: checklist });
    const before = await state();
    // Claude Code's Edit tool also sends replace_all; this tool has no such argument.
    const refused = await call("edit_task_plan", {
      expected_version: 1,
      old_string: "- [ ] a",
      new_string: "- [x] a",
      replace_all: false,
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(
      /unknown argument "replace_all"; the accepted arguments are task_id, expected_version, old_text, new_text, acknowledge_reduction, request_id, merge \(aliases are accepted too: /,
    );
    expect(text(refused)).toMatch(/reason=UNKNOWN_ARGUMENT/);
    expect(await state()).toEqual(before);
    // A misspelt name is no longer dropped silently (the write would have run without it).
    const misspelt = await call("update_task_plan", { content: "# Gone", expectd_version: 1 });
    expect([misspelt.isError, text(misspelt)]).toEqual([
      true,
      expect.stringMatching(
        /unknown argument "expectd_version"; the accepted arguments are task_id, content,/,
      ),
    ]);
    expect(await state()).toEqual(before);
  });

  it("a read tool refuses an unknown name too, and a required argument missing under every name is still the schema's error", async () => {
    await call("create_task_plan", { content: checklist });
    const read = await call("get_task_plan", { offset: 0, page: 2 });
    expect([read.isError, text(read)]).toEqual([
      true,
      expect.stringMatching(
        /^get_task_plan did not run.*unknown argument "page"; the accepted arguments are task_id, offset, limit /,
      ),
    ]);
    const missing = await call("edit_task_plan", { expected_version: 1, new_string: "x" });
    expect([missing.isError, text(missing)]).toEqual([true, expect.stringMatching(/old_text/)]);
    expect(await state()).toEqual({ content: checklist, version: 1, revisions: 1 });
  });

  it("the taskplans-mcp bin over stdio takes the aliases too", async () => {
    await call("create_task_plan", { content: checklist });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        join(__dirname, "..", "..", "..", "mcp", "dist", "main.js"),
        "--target",
        `127.0.0.1:${app.port}`,
      ],
      env: { PATH: process.env.PATH ?? "" },
      stderr: "ignore",
    });
    const client = new Client({ name: "stdio-agent", version: "1.0.0" });
    await client.connect(transport);
    try {
      const edited = await client.callTool({
        name: "edit_task_plan",
        arguments: { taskId, expectedVersion: 1, old_str: "- [ ] b", new_str: "- [x] b" },
      });
      expect(text(edited)).toMatch(/^Plan edited successfully: .*version=2\./);
    } finally {
      await client.close();
    }
    expect(await content()).toBe("# Plan\n\n- [ ] a\n- [x] b\n");
  });
});
