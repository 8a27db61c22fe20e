import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { MergeMethod } from "@taskplans/contract";
import { createPlanMcpServer } from "@taskplans/mcp";
import { curl } from "../../harness/calls/curl";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { type InstalledPlanctl, installPlanctl } from "../../harness/packages/planctl";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

// Issue 56's scenario as a user meets it: a checklist at version 1; a person ticks "c" through one
// replica (version 2); an agent that read version 1 ticks "d", the box right below, with merge, through
// the other replica and each door in turn: gRPC, the HTTP door (Connect JSON through real curl), the
// MCP tool and planctl. Before issue 56 every one of them was refused MERGE_CONFLICT.
const PLAN = "# Plan\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d\n";
const BOTH_TICKED = "# Plan\n- [ ] a\n- [ ] b\n- [x] c\n- [x] d\n";
const person = { kind: 2, name: "Ada" };

describe.each(DATABASES)("ticking the box next to one another writer ticked, on $label", ({ dialect }) => {
  let writer: TestApp; // the person's replica
  let agent: TestApp; // the agent's (the same one on SQLite, whose file one process owns)
  let nodes: RedisNode[] = [];
  let work: string;
  let cli: InstalledPlanctl;

  beforeAll(async () => {
    if (dialect === "mysql") {
      nodes = await startRedisNodes(3);
      const env = { PLAN_REDIS_URLS: nodes.map((n) => n.url).join(","), PLAN_COALESCE_WINDOW_MS: "0" };
      writer = await startTestApp(dialect, { env });
      agent = await startTestApp(dialect, { env: { ...env, PLAN_DATABASE_URL: writer.databaseUrl } });
    } else {
      writer = await startTestApp(dialect, { env: { PLAN_COALESCE_WINDOW_MS: "0" } });
      agent = writer;
    }
    work = mkdtempSync(join(tmpdir(), "taskplans-ticks-"));
    cli = await installPlanctl(work, `127.0.0.1:${agent.port}`);
  }, 600_000);
  afterAll(async () => {
    if (agent !== writer) await agent?.stop();
    await writer?.stop();
    for (const node of nodes) await node.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  // A task at version 2: the plan, then the person's tick of "c" through the writer's replica.
  async function tickedByThePerson(): Promise<string> {
    const taskId = await writer.newTask();
    await writer.plans.createPlan({ taskId, content: PLAN });
    await writer.plans.editPlan({
      taskId,
      expectedVersion: 1,
      oldText: "- [ ] c",
      newText: "- [x] c",
      author: person,
    });
    return taskId;
  }

  async function expectBothTicks(taskId: string): Promise<void> {
    const { plan } = await writer.plans.getPlan({ taskId });
    expect([plan?.content, plan?.version]).toEqual([BOTH_TICKED, 3]);
    const { revisions } = await writer.plans.listPlanRevisions({ taskId });
    expect(revisions.map((r) => r.authorName)).toEqual(expect.arrayContaining(["Ada"]));
    expect(revisions).toHaveLength(3);
  }

  const tick = { oldText: "- [ ] d", newText: "- [x] d", expectedVersion: 1, merge: true };

  it("through gRPC", async () => {
    const taskId = await tickedByThePerson();
    const written = await agent.plans.editPlan({ taskId, ...tick });
    expect([written.merge, written.mergeMethod]).toEqual([
      { fromVersion: 1, toVersion: 2 },
      MergeMethod.MERGE_METHOD_EDIT_REAPPLIED,
    ]);
    await expectBothTicks(taskId);
  });

  it("through the HTTP door (Connect JSON, curl)", async () => {
    const taskId = await tickedByThePerson();
    const answer = await curl([
      "-X",
      "POST",
      "-H",
      "Content-Type: application/json",
      "--data-binary",
      JSON.stringify({ taskId, ...tick }),
      `http://127.0.0.1:${agent.httpPort}/taskplans.v1.PlanService/EditPlan`,
    ]);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      merge: { fromVersion: "1", toVersion: "2" },
      mergeMethod: "MERGE_METHOD_EDIT_REAPPLIED",
    });
    await expectBothTicks(taskId);
  });

  it("through the MCP tool edit_task_plan", async () => {
    const taskId = await tickedByThePerson();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createPlanMcpServer({ client: agent, taskId }).connect(serverSide);
    const mcp = new Client({ name: "ticks-agent", version: "1.0.0" });
    await mcp.connect(clientSide);
    try {
      const result = await mcp.callTool({
        name: "edit_task_plan",
        arguments: { old_text: "- [ ] d", new_text: "- [x] d", expected_version: 1, merge: true },
      });
      const text = (result.content as { text?: string }[]).map((c) => c.text ?? "").join("\n");
      expect(result.isError ?? false).toBe(false);
      expect(text).toContain("Your old_text still occurred exactly once");
    } finally {
      await mcp.close();
    }
    await expectBothTicks(taskId);
  });

  it("through planctl edit --merge", async () => {
    const taskId = await tickedByThePerson();
    const edited = await cli.run([
      "edit",
      taskId,
      "--old",
      "- [ ] d",
      "--new",
      "- [x] d",
      "--expected-version",
      "1",
      "--merge",
    ]);
    expect([edited.code, edited.stdout]).toEqual([
      0,
      expect.stringMatching(
        new RegExp(
          `^${taskId} version 3 \\d+ bytes revision 3 merged with versions 2\\.\\.2 \\(edit re-applied\\) checklist 2 of 4 done\\n$`,
        ),
      ),
    ]);
    await expectBothTicks(taskId);
  });
});
