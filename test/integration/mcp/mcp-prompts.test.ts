import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { TaskPlansClient } from "@taskplans/client";
import { connectPlanService, createPlanMcpServer } from "@taskplans/mcp";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The prompts a host offers its user, through the SDK's own client: review a plan (embedded as a
// resource, bound to its version), and recover from a refused write (its reason completes).
describe("MCP prompts", () => {
  let app: TestApp;
  let grpc: TaskPlansClient;
  let host: Client;
  let taskId: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite");
    grpc = connectPlanService(`127.0.0.1:${app.port}`);
    ({ taskId } = await app.planWith("# Plan\n\n- [ ] migrate\n- [ ] deploy", "Rollout"));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createPlanMcpServer({ client: grpc, taskId }).connect(serverSide);
    host = new Client({ name: "test-host", version: "1.0.0" });
    await host.connect(clientSide);
  });
  afterAll(async () => {
    await host.close();
    grpc.close();
    await app.stop();
  });

  it("lists review_plan and recover_from_refused_write, each with a description and its arguments", async () => {
    const { prompts } = await host.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["recover_from_refused_write", "review_plan"]);
    for (const prompt of prompts) expect(prompt.description).toBeTruthy();
    const recover = prompts.find((p) => p.name === "recover_from_refused_write");
    expect(recover?.arguments).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "reason", required: true })]),
    );
  });

  it("review_plan embeds the plan exactly as a resource and asks for edits against its version, not a rewrite", async () => {
    const prompt = await host.getPrompt({ name: "review_plan", arguments: {} });
    expect(prompt.messages[0]?.content).toEqual({
      type: "resource",
      resource: {
        uri: `taskplans://tasks/${encodeURIComponent(taskId)}/plan`,
        mimeType: "text/markdown",
        text: "# Plan\n\n- [ ] migrate\n- [ ] deploy",
      },
    });
    const instructions = prompt.messages[1]?.content;
    expect(instructions).toMatchObject({ type: "text" });
    const text = (instructions as { text: string }).text;
    expect(text).toContain("expected_version=1");
    expect(text).toContain("Do not rewrite the plan");
    expect(text).toContain('mode="append"');
  });

  it("review_plan of a task without a plan is -32002 resource not found", async () => {
    const planless = await app.newTask();
    const error = (await host
      .getPrompt({ name: "review_plan", arguments: { task_id: planless } })
      .catch((e: unknown) => e)) as McpError;
    expect(error.code).toBe(-32002);
  });

  it("recover_from_refused_write gives the way back in tool names for the reason, and its reason completes", async () => {
    const stale = await host.getPrompt({
      name: "recover_from_refused_write",
      arguments: { reason: "VERSION_MISMATCH", expected_version: "3" },
    });
    const text = (stale.messages[0]?.content as { text: string }).text;
    expect(text).toContain("reason=VERSION_MISMATCH");
    expect(text).toContain("get_task_plan_changes with since_version=3");
    const reduction = await host.getPrompt({
      name: "recover_from_refused_write",
      arguments: { reason: "REDUCTION_NOT_ACKNOWLEDGED" },
    });
    expect((reduction.messages[0]?.content as { text: string }).text).toMatch(
      /mode="append".*acknowledge_reduction=true/s,
    );
    const completion = await host.complete({
      ref: { type: "ref/prompt", name: "recover_from_refused_write" },
      argument: { name: "reason", value: "merge" },
    });
    expect(completion.completion.values).toEqual(["MERGE_CONFLICT"]);
  });
});
