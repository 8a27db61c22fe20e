import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ChecklistProgress, TaskPlansClient } from "@taskplans/client";
import { checklistNote, createPlanMcpServer } from "@taskplans/mcp";

// The MCP tools say a plan's checklist progress (issue 56, item 3): the figure the service counted,
// in a write's acknowledgement (short: bench:changes measures them in bytes), in get_task_plan's
// metadata and in each listed resource's _meta. Absent (not counted yet) and total 0 add nothing to
// an acknowledgement.
const plan = (checklist?: ChecklistProgress) => ({
  taskId: "t-1",
  title: "P",
  version: 2,
  contentBytes: 30,
  contentChars: 30,
  latestRevisionNumber: 2,
  content: "# P\n\n- [x] a\n- [ ] b\n- [ ] c\n",
  ...(checklist ? { checklist } : {}),
});

async function connected(checklist?: ChecklistProgress): Promise<Client> {
  const written = async () => ({ plan: plan(checklist), revision: { id: "r", number: 2, coalesced: false } });
  const fake = {
    plans: {
      editPlan: written,
      updatePlan: written,
      createPlan: written,
      getPlan: async () => ({ plan: plan(checklist) }),
    },
    tasks: { listTasks: async () => ({ tasks: [{ taskId: "t-1" }], nextPageToken: "" }) },
  } as unknown as TaskPlansClient;
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createPlanMcpServer({ client: fake, subscriptions: false }).connect(serverSide);
  const client = new Client({ name: "unit", version: "1" });
  await client.connect(clientSide);
  return client;
}

const text = (result: unknown) =>
  ((result as { content: { text: string }[] }).content[0]?.text ?? "") as string;

describe("checklistNote (mcp/src/tool-texts.ts)", () => {
  it.each([
    [{ checked: 1, total: 3 }, " Checklist: 1 of 3 items done."],
    [{ checked: 3, total: 3 }, " Checklist: 3 of 3 items done."],
    [{ checked: 0, total: 0 }, ""],
    [undefined, ""],
  ])("%j -> %j", (progress, note) => {
    expect(checklistNote(progress)).toBe(note);
  });

  it("stays under 40 bytes with five-digit counts (a 256 KiB plan holds at most 32,768 items)", () => {
    expect(Buffer.byteLength(checklistNote({ checked: 87_381, total: 87_381 }))).toBeLessThan(40);
  });
});

describe("the MCP tools with a plan's checklist progress", () => {
  it("an edit's acknowledgement ends its line with the progress", async () => {
    const client = await connected({ checked: 1, total: 3 });
    const result = await client.callTool({
      name: "edit_task_plan",
      arguments: { task_id: "t-1", expected_version: 1, old_text: "x", new_text: "y" },
    });
    expect(text(result)).toBe(
      'Plan edited successfully: task_id=t-1, title="P", 30 bytes, version=2. Checklist: 1 of 3 items done. Content omitted; read it with get_task_plan.',
    );
  });

  it.each([
    ["total 0 (no checklist)", { checked: 0, total: 0 }],
    ["absent (not counted yet)", undefined],
  ])("an append's acknowledgement says nothing of a checklist when it is %s", async (_what, progress) => {
    const client = await connected(progress);
    const result = await client.callTool({
      name: "update_task_plan",
      arguments: { task_id: "t-1", mode: "append", content: "- [ ] d" },
    });
    expect(text(result)).toBe(
      'Plan appended successfully: task_id=t-1, title="P", 30 bytes, version=2. Content omitted; read it with get_task_plan.',
    );
  });

  it("get_task_plan's metadata and resources/list's _meta carry checklist {checked, total}", async () => {
    const client = await connected({ checked: 2, total: 3 });
    const read = await client.callTool({ name: "get_task_plan", arguments: { task_id: "t-1" } });
    const metadata = JSON.parse(text(read).replace(/^Plan metadata:\n/, "")) as Record<string, unknown>;
    expect(metadata.checklist).toEqual({ checked: 2, total: 3 });
    const listed = await client.listResources();
    expect(listed.resources[0]?._meta).toMatchObject({ checklist: { checked: 2, total: 3 } });
  });

  it("resources/list leaves checklist out of _meta for a plan not counted yet", async () => {
    const client = await connected();
    const listed = await client.listResources();
    expect(listed.resources[0]?._meta).not.toHaveProperty("checklist");
  });
});
