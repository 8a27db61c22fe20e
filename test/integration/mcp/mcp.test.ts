import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { SignJWT } from "jose";
import type { TaskPlansClient } from "@taskplans/client";
import { startMcpHttpServer } from "@taskplans/mcp";
import { CONFIGURE_TOKEN } from "@taskplans/mcp";
import { freePort } from "../../harness/servers/free-port";
import { deeplyNestedToolCalls } from "../../harness/calls/nested-tool-calls";
import { createPlanMcpServer } from "@taskplans/mcp";
import { connectPlanService } from "@taskplans/mcp";
import { GatedLock } from "../../harness/fixtures/gated-lock";
import { RECOVERY_PATHS, staleEditSession } from "../../harness/calls/stale-edit-session";
import { execSql } from "../../harness/databases/sql";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

const TOOLS = [
  "create_task_plan",
  "delete_task_plan",
  "edit_task_plan",
  "get_task_plan",
  "get_task_plan_changes",
  "get_task_plan_revision",
  "list_task_plan_revisions",
  "restore_task_plan_revision",
  "update_task_plan",
];

async function mcpClient(
  grpc: TaskPlansClient,
  options: { taskId?: string; token?: string } = {},
): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createPlanMcpServer({ client: grpc, ...options }).connect(serverSide);
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

const BIN = join(__dirname, "..", "..", "..", "mcp", "dist", "main.js");
const INITIALIZE = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "1" },
};

const text = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((b) => ("text" in b ? b.text : "")).join("\n");

describe("MCP server over the generated gRPC client", () => {
  let app: TestApp;
  let grpc: TaskPlansClient;
  let agent: Client;
  let taskId: string;

  const lock = new GatedLock();
  beforeAll(async () => {
    app = await startTestApp("sqlite", { env: { PLAN_LOCK_WAIT_MS: "200" }, overrides: { lock } });
    grpc = connectPlanService(`127.0.0.1:${app.port}`);
  });
  afterAll(async () => {
    grpc.close();
    await app.stop();
  });
  beforeEach(async () => {
    taskId = await app.newTask();
    agent = await mcpClient(grpc, { taskId });
  });
  afterEach(() => agent.close());

  const call = (name: string, args: Record<string, unknown> = {}) =>
    agent.callTool({ name, arguments: args });
  const stored = async () => (await app.plans.getPlan({ taskId }).catch(() => ({ plan: undefined }))).plan;

  it("lists the nine plan tools", async () => {
    expect((await agent.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOLS);
  });

  describe("descriptions (AC-TASKS-PLAN-APPEND-006.1 to 006.9, seed 003)", () => {
    let descriptions: Map<string, string>;
    beforeAll(async () => {
      const client = await mcpClient(grpc);
      descriptions = new Map();
      for (const tool of (await client.listTools()).tools) {
        descriptions.set(tool.name, tool.description ?? "");
        const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
        for (const [param, schema] of Object.entries(properties))
          descriptions.set(`${tool.name}.${param}`, schema.description ?? "");
      }
      await client.close();
    });

    it("AC-TASKS-PLAN-APPEND-006.1/006.2/006.3/006.4/006.5: update_task_plan states modes, default, warning, separator, non-idempotence, no read", () => {
      const update = descriptions.get("update_task_plan") ?? "";
      expect(update).toMatch(/"replace" \(the default when mode is omitted\) or "append"/);
      expect(update).toMatch(/mode="replace" submits the whole document/);
      expect(update).toMatch(/mode="append" submits only the addition/);
      expect(update).toMatch(/overwrites the entire plan: sending only a section deletes the rest/);
      expect(update).toMatch(/the current plan, one blank line, then your content/);
      expect(update).toMatch(/An append is not idempotent: resubmitting it adds the content again/);
      expect(update).toMatch(/Append does not require reading the plan first/);
    });

    it("replace, edit and restore say a version from a prior read or write is required, and why", () => {
      for (const name of ["update_task_plan", "edit_task_plan", "restore_task_plan_revision"]) {
        expect(descriptions.get(name)).toMatch(/expected_version/);
        expect(descriptions.get(name)).toMatch(/(prior read or write|your last get_task_plan|last write)/);
        expect(descriptions.get(name)).toMatch(/never silently (discards|replaces)/);
      }
    });

    it("get_task_plan_changes says when to use it and what to do when history is gone; merge says what happens on a conflict", () => {
      const changes = descriptions.get("get_task_plan_changes") ?? "";
      expect(changes).toMatch(/only what changed/);
      expect(changes).toMatch(/VERSION_MISMATCH/);
      expect(changes).toMatch(/read the whole plan with get_task_plan/);
      expect(descriptions.get("get_task_plan_changes.since_version")).toMatch(/version you last read/);
      for (const tool of ["create_task_plan", "update_task_plan", "edit_task_plan"]) {
        const merge = descriptions.get(`${tool}.merge`) ?? "";
        expect([tool, merge]).toEqual([
          tool,
          expect.stringMatching(/instead of refusing with VERSION_MISMATCH/),
        ]);
        expect([tool, merge]).toEqual([tool, expect.stringMatching(/nothing is written \(MERGE_CONFLICT\)/)]);
        expect([tool, merge]).toEqual([tool, expect.stringMatching(/their lines are always kept/)]);
      }
    });

    it("AC-TASKS-PLAN-APPEND-006.9: create_task_plan says it writes the whole plan and names update_task_plan append", () => {
      for (const key of ["create_task_plan", "create_task_plan.mode"]) {
        expect(descriptions.get(key)).toMatch(/update_task_plan with mode="append"/);
      }
      expect(descriptions.get("create_task_plan")).toMatch(/always writes the whole document/);
    });

    it("AC-TASKS-PLAN-APPEND-006.9: no tool or parameter text says there is no append mode or prescribes read-and-resubmit to add a section", () => {
      for (const [key, description] of descriptions) {
        expect([key, description]).not.toEqual([
          key,
          expect.stringMatching(/no (append|partial)[- ]?(mode|update|write)?\b/i),
        ]);
        expect([key, description]).not.toEqual([
          key,
          expect.stringMatching(/(does not|doesn't|cannot) (support )?append/i),
        ]);
        for (const sentence of description.split(/(?<=[.;:])\s/)) {
          if (/add (a|the) section/i.test(sentence))
            expect([key, sentence]).toEqual([key, expect.stringMatching(/append/)]);
        }
      }
    });
  });

  it("AC-TASKS-PLAN-APPEND-006.6: acknowledgements report the stored size after an append and never echo the document", async () => {
    const created = text(await call("create_task_plan", { content: "# Plan\n" }));
    expect(created).toBe(
      `Plan created successfully: task_id=${taskId}, title="Plan", 7 bytes, version=1. Content omitted; read it with get_task_plan.`,
    );
    const appended = text(
      await call("update_task_plan", { mode: "append", content: "## Notes\n- a secret detail" }),
    );
    const composed = "# Plan\n\n## Notes\n- a secret detail";
    expect(appended).toContain(`${Buffer.byteLength(composed)} bytes, version=2`);
    expect(appended).not.toContain("secret");
    expect(appended.split("\n")).toHaveLength(1);
  });

  it('validates mode exactly in the tool: "Append" is rejected naming both values and nothing changes', async () => {
    await call("create_task_plan", { content: "keep" });
    for (const mode of ["Append", "APPEND", "merge", 2]) {
      const result = await call("update_task_plan", { mode, content: "x" });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(
        /^Plan was not changed because mode .* is not recognized; the accepted values are "replace" and "append"/,
      );
    }
    expect((await stored())?.content).toBe("keep");
  });

  it("AC-TASKS-PLAN-APPEND-005.2: create_task_plan with a mode is rejected naming update_task_plan append; nothing is stored", async () => {
    const result = await call("create_task_plan", { mode: "append", content: "fragment" });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /^Plan was not changed because create_task_plan always writes the whole document/,
    );
    expect(text(result)).toContain('update_task_plan with mode="append"');
    expect(await stored()).toBeUndefined();
  });

  it("get_task_plan returns metadata and content as separate blocks, and reads ranges", async () => {
    await call("create_task_plan", { content: "0123456789", title: "Digits" });
    const whole = (await call("get_task_plan")) as CallToolResult;
    expect(whole.content).toHaveLength(2);
    const meta = JSON.parse(text({ content: [whole.content[0]] }).replace(/^Plan metadata:\n/, ""));
    expect(meta).toMatchObject({
      title: "Digits",
      version: 1,
      contentBytes: 10,
      contentChars: 10,
      latestRevisionNumber: 1,
    });
    expect(text({ content: [whole.content[1]] })).toBe("0123456789");
    const part = (await call("get_task_plan", { offset: 3, limit: 4 })) as CallToolResult;
    expect(text({ content: [part.content[1]] })).toBe("3456");
    expect(text({ content: [part.content[0]] })).toMatch(/"has_more": true/);
  });

  it("task_id defaults to the server's task and can name another reachable task", async () => {
    const other = await app.newTask();
    await call("create_task_plan", { task_id: other, content: "other task" });
    expect((await app.plans.getPlan({ taskId: other })).plan?.content).toBe("other task");
    expect(await stored()).toBeUndefined();
    const noDefault = await mcpClient(grpc);
    const result = await noDefault.callTool({ name: "get_task_plan", arguments: {} });
    expect(text(result)).toMatch(/^The plan was not read because no task_id was given/);
    await noDefault.close();
  });

  it("every service error becomes a tool error that says nothing changed (a read: that nothing was read), names the reason and the next action", async () => {
    await call("create_task_plan", { content: `# Big\n${"line of the plan\n".repeat(200)}` });
    const version = 1;
    const revisionId = JSON.parse(
      text(await call("list_task_plan_revisions")).replace(/^Plan revisions:\n/, ""),
    ).revisions[0].id;
    const otherTask = await app.newTask();
    await call("update_task_plan", { mode: "append", content: "x", request_id: "used" });
    const cases: [string, Record<string, unknown>, string][] = [
      ["update_task_plan", { content: "" }, "CONTENT_REQUIRED"],
      ["update_task_plan", { mode: "append", content: " \n\u00a0" }, "FRAGMENT_BLANK"],
      ["update_task_plan", { content: "whole" }, "VERSION_REQUIRED"],
      ["update_task_plan", { content: "whole", expected_version: 99 }, "VERSION_MISMATCH"],
      ["update_task_plan", { content: "short", expected_version: 2 }, "REDUCTION_NOT_ACKNOWLEDGED"],
      [
        "update_task_plan",
        { mode: "append", content: "x", acknowledge_reduction: true },
        "REDUCTION_ACK_NOT_APPLICABLE",
      ],
      ["update_task_plan", { mode: "append", content: "y", request_id: "used" }, "REQUEST_ID_REUSED"],
      ["update_task_plan", { mode: "append", content: "x".repeat(262_144) }, "PLAN_TOO_LARGE"],
      ["update_task_plan", { task_id: otherTask, mode: "append", content: "x" }, "PLAN_NOT_FOUND"],
      ["update_task_plan", { task_id: randomId("missing"), mode: "append", content: "x" }, "TASK_NOT_FOUND"],
      ["create_task_plan", { content: "again" }, "PLAN_EXISTS"],
      ["edit_task_plan", { expected_version: 2, old_text: "", new_text: "x" }, "EDIT_TEXT_REQUIRED"],
      ["edit_task_plan", { expected_version: 2, old_text: "absent", new_text: "x" }, "EDIT_TEXT_NOT_FOUND"],
      [
        "edit_task_plan",
        { expected_version: 2, old_text: "line of the plan", new_text: "x" },
        "EDIT_TEXT_NOT_UNIQUE",
      ],
      ["get_task_plan", { offset: 1_000_000 }, "OFFSET_OUT_OF_RANGE"],
      ["get_task_plan", { task_id: "bad id" }, "INVALID_FIELD"],
      ["get_task_plan_revision", { revision_id: "nope" }, "REVISION_NOT_FOUND"],
      [
        "restore_task_plan_revision",
        { revision_id: revisionId, expected_version: 2 },
        "REVISION_VERSION_REQUIRED",
      ],
      [
        "restore_task_plan_revision",
        { revision_id: revisionId, expected_version: 2, expected_revision_version: "x" },
        "REVISION_CHANGED",
      ],
      ["delete_task_plan", { expected_version: version }, "VERSION_MISMATCH"],
    ];
    const before = await stored();
    const reads = new Set(["get_task_plan", "get_task_plan_revision", "list_task_plan_revisions"]);
    for (const [tool, args, reason] of cases) {
      const result = await call(tool, args);
      const message = text(result);
      expect([tool, reason, result.isError]).toEqual([tool, reason, true]);
      expect([tool, message]).toEqual([
        tool,
        expect.stringMatching(
          reads.has(tool) ? /^The plan was not read: / : /^Plan was not changed because /,
        ),
      ]);
      expect(message).toContain(`reason=${reason};`);
      expect(message).toMatch(/next_action=\S/);
      expect(message).not.toMatch(/\n\s+at |Error:|SQL|sqlite|typeorm/i);
    }
    expect(await stored()).toEqual(before);
  });

  it("a definite rejection without ErrorInfo (over the service's 1 MiB message limit) says the plan was not changed", async () => {
    await call("create_task_plan", { content: "# Plan" });
    const before = await stored();
    const result = await call("update_task_plan", { mode: "append", content: "x".repeat(1_200_000) });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /^Plan was not changed because the plan service refused the request \(RESOURCE_EXHAUSTED: /,
    );
    expect(text(result)).toContain("reason=RESOURCE_EXHAUSTED; next_action=Send less in one call");
    expect(text(result)).not.toMatch(/may not/);
    expect(await stored()).toEqual(before);
  });

  it("tool arguments are validated before the call: an offset of 2^33 is a tool error naming offset", async () => {
    await call("create_task_plan", { content: "# Plan" });
    const result = await call("get_task_plan", { offset: 2 ** 33 });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/offset/);
    expect(text(result)).not.toMatch(/INTERNAL|UNKNOWN/);
  });

  it("only a transport failure says the plan may not have been changed; a read then says the service did not answer", async () => {
    const unreachable = connectPlanService(`127.0.0.1:${await freePort()}`);
    const offline = await mcpClient(unreachable, { taskId });
    try {
      const write = text(
        await offline.callTool({ name: "update_task_plan", arguments: { mode: "append", content: "x" } }),
      );
      expect(write).toMatch(
        /^Plan may not have been changed: the plan service did not complete the call \(UNAVAILABLE\)\. reason=UNAVAILABLE; next_action=Read the plan/,
      );
      const read = text(await offline.callTool({ name: "get_task_plan", arguments: {} }));
      expect(read).toBe(
        "The plan service did not answer (UNAVAILABLE). reason=UNAVAILABLE; next_action=Retry the read.",
      );
    } finally {
      await offline.close();
      unreachable.close();
    }
  });

  it("infrastructure failures come through the same way: PLAN_READ_FAILED, LOCK_UNAVAILABLE, WRITE_CONFLICT", async () => {
    await call("create_task_plan", { content: "stored" });
    await execSql(
      app.databaseUrl,
      "UPDATE task_plans SET content_bytes = content_bytes + 1 WHERE task_id = ?",
      [taskId],
    );
    expect(text(await call("update_task_plan", { mode: "append", content: "x" }))).toMatch(
      /^Plan was not changed because the stored plan could not be read.*reason=PLAN_READ_FAILED;/,
    );
    await execSql(
      app.databaseUrl,
      "UPDATE task_plans SET content_bytes = content_bytes - 1 WHERE task_id = ?",
      [taskId],
    );
    const entered = lock.entered;
    lock.hold();
    const holder = app.plans.updatePlan({ taskId, content: "held", mode: 2 });
    await lock.untilEntered(entered + 1);
    expect(text(await call("update_task_plan", { mode: "append", content: "x" }))).toMatch(
      /reason=LOCK_UNAVAILABLE;/,
    );
    lock.open();
    await holder;
    lock.loseLease = true;
    expect(text(await call("update_task_plan", { mode: "append", content: "x" }))).toMatch(
      /reason=WRITE_CONFLICT;/,
    );
    lock.loseLease = false;
    expect((await stored())?.content).toBe("stored\n\nheld");
  });

  it("an acknowledged reduction answers with the warning: append named, prior revision, recovery tools, not from memory", async () => {
    const big = `# Plan\n${"a detailed step\n".repeat(200)}`;
    await call("create_task_plan", { content: big });
    const result = text(
      await call("update_task_plan", { content: "- done", expected_version: 1, acknowledge_reduction: true }),
    );
    expect(result).toMatch(/^Plan replaced successfully: .* 6 bytes, version=2\./);
    expect(result).toContain(`WARNING: this replace kept 6 of ${big.length} characters`);
    expect(result).toContain('update_task_plan with mode="append"');
    expect(result).toContain("plan revision 1");
    expect(result).toContain("get_task_plan_revision");
    expect(result).toContain("restore_task_plan_revision");
    expect(result).toContain("Do not rewrite the plan from memory.");
  });

  it("edits, lists, reads and restores revisions, and deletes", async () => {
    await call("create_task_plan", { content: "status: todo" });
    expect(
      text(await call("edit_task_plan", { expected_version: 1, old_text: "todo", new_text: "done" })),
    ).toMatch(/^Plan edited successfully/);
    await app.plans.savePlan({ taskId, content: "a person rewrote it" });
    const listing = JSON.parse(
      text(await call("list_task_plan_revisions")).replace(/^Plan revisions:\n/, ""),
    );
    const first = listing.revisions.at(-1);
    const revision = (await call("get_task_plan_revision", { revision_id: first.id })) as CallToolResult;
    expect(text({ content: [revision.content[1]] })).toBe("status: done");
    const restored = text(
      await call("restore_task_plan_revision", {
        revision_id: first.id,
        expected_version: 3,
        expected_revision_version: first.revisionVersion,
      }),
    );
    expect(restored).toMatch(/^Plan restored successfully: .*version=4\..*plan revision 2\.$/s);
    expect(text(await call("delete_task_plan"))).toBe(
      `Plan deleted successfully: task_id=${taskId}. Its revisions are kept.`,
    );
    expect(await stored()).toBeUndefined();
  });

  describe("changes since a version and merge (issue 44)", () => {
    // A plan with a checklist; a person ticks one box (another writer) while the agent holds version 1.
    const checklist = [
      "# Plan",
      "",
      "- [ ] design",
      "- [ ] review",
      "- [ ] ship",
      ...Array.from({ length: 12 }, (_, i) => `- note ${i}`),
      "",
    ].join("\n");
    const ticked = checklist.replace("- [ ] review", "- [x] review");
    const person = () => app.plans.savePlan({ taskId, content: ticked });

    it("get_task_plan_changes answers the current version, who changed it and the unified diff, never the plan", async () => {
      await call("create_task_plan", { content: checklist });
      await person();
      const result = (await call("get_task_plan_changes", { since_version: 1 })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const [summary, diff] = result.content.map((b) => ("text" in b ? b.text : ""));
      expect(summary).toMatch(
        new RegExp(
          `^Plan changes since version 1: now version 2 \\(your next expected_version\\), ${Buffer.byteLength(ticked)} bytes \\(was ${Buffer.byteLength(checklist)}\\); diff: \\+1 -1 lines\\.\n- version 2: updated by user "User" at 20\\d\\d-`,
        ),
      );
      expect(diff).toContain("\n-- [ ] review\n+- [x] review\n");
      expect(diff).toMatch(/^--- version 1\n\+\+\+ version 2\n@@ /);
      expect(diff).not.toContain("note 11"); // three lines of context, not the plan
      expect(text(await call("get_task_plan_changes", { since_version: 2 }))).toBe(
        `No changes to the plan's content since version 2: it is the current version, ${Buffer.byteLength(ticked)} bytes.`,
      );
    });

    it("HISTORY_UNAVAILABLE from get_task_plan_changes tells the agent to read the whole plan", async () => {
      await call("create_task_plan", { content: checklist });
      const result = await call("get_task_plan_changes", { since_version: 7 });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^The plan was not read: /);
      expect(text(result)).toContain(
        "reason=HISTORY_UNAVAILABLE; next_action=Read the whole plan with get_task_plan and use its version from now on.",
      );
    });

    it("a stale edit's VERSION_MISMATCH names get_task_plan_changes and merge=true as the way back; a stale delete's does not", async () => {
      await call("create_task_plan", { content: checklist });
      await person();
      const stale = text(
        await call("edit_task_plan", { expected_version: 1, old_text: "- [ ] ship", new_text: "- [x] ship" }),
      );
      expect(stale).toMatch(/^Plan was not changed because /);
      expect(stale).toContain(
        "reason=VERSION_MISMATCH; next_action=Call get_task_plan_changes with since_version=1 for only what changed",
      );
      expect(stale).toContain("merge=true");
      expect(text(await call("delete_task_plan", { expected_version: 1 }))).not.toContain("merge=true");
      expect((await stored())?.content).toBe(ticked);
    });

    it("edit_task_plan with merge=true keeps the other writer's change, says it merged over versions 1..2, and never echoes the plan", async () => {
      await call("create_task_plan", { content: checklist });
      await person();
      const merged = text(
        await call("edit_task_plan", {
          expected_version: 1,
          old_text: "- note 5\n",
          new_text: "- note 5 (done)\n",
          merge: true,
        }),
      );
      const result = ticked.replace("- note 5\n", "- note 5 (done)\n");
      expect(merged).toMatch(
        new RegExp(
          `^Plan edited successfully: task_id=${taskId}, title="Plan", ${Buffer.byteLength(result)} bytes, version=3\\. Checklist: 1 of 3 items done\\. Content omitted; read it with get_task_plan\\.\n\nMerged: your change was based on version 1; the changes others made in version 2 were kept \\(merged over versions 1\\.\\.2\\)\\. Your old_text still occurred exactly once, so your edit was applied to the current plan\\.`,
        ),
      );
      expect(merged).not.toContain("note 3");
      expect(merged).not.toContain("review");
      expect((await stored())?.content).toBe(result);
      // With a current version, merge=true is an ordinary write: nothing to say about merging.
      const current = text(
        await call("edit_task_plan", {
          expected_version: 3,
          old_text: "- [ ] design",
          new_text: "- [x] design",
          merge: true,
        }),
      );
      expect(current).not.toMatch(/Merged/);
    });

    it("update_task_plan replace with merge=true merges a whole document over another writer's change", async () => {
      await call("create_task_plan", { content: checklist });
      await person();
      const mine = `${checklist}- [ ] celebrate\n`;
      const merged = text(
        await call("update_task_plan", { content: mine, expected_version: 1, merge: true }),
      );
      expect(merged).toMatch(/^Plan replaced successfully: .*version=3\..*merged over versions 1\.\.2/s);
      expect((await stored())?.content).toBe(`${ticked}- [ ] celebrate\n`);
      const append = await call("update_task_plan", { mode: "append", content: "x", merge: true });
      expect(text(append)).toContain("reason=MERGE_NOT_APPLICABLE;");
    });

    it("recovering from a stale one-line edit of a 200 KiB plan costs at most 2 KiB through changes-since or merge, against the plan's size by a full read (bytes, not time)", async () => {
      const totals: Record<string, number> = {};
      for (const path of RECOVERY_PATHS) {
        const session = await staleEditSession(grpc, () => app.newTask(), 200 * 1024, path);
        expect([path, session.bothKept]).toEqual([path, true]);
        totals[path] = session.recovery.sent + session.recovery.received;
      }
      expect(totals["refusal, full read, edit"]).toBeGreaterThan(200 * 1024);
      expect(totals["refusal, changes since V, edit"]).toBeLessThanOrEqual(2048);
      expect(totals["edit with merge=true"]).toBeLessThanOrEqual(2048);
      expect(totals["neighbouring tick, edit with merge=true"]).toBeLessThanOrEqual(1024);
    });

    it("a merge conflict writes nothing and shows the conflicting lines, with the next action in tool names", async () => {
      await call("create_task_plan", { content: checklist });
      await person();
      const before = await stored();
      const result = (await call("edit_task_plan", {
        expected_version: 1,
        old_text: "- [ ] review",
        new_text: "- [ ] review twice",
        merge: true,
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      const [refusal, regions] = result.content.map((b) => ("text" in b ? b.text : ""));
      expect(refusal).toMatch(/^Plan was not changed because /);
      expect(refusal).toContain(
        "reason=MERGE_CONFLICT; next_action=Call get_task_plan_changes with since_version=1 to see what others changed, redo your change on the current content, and retry with expected_version=2.",
      );
      expect(regions).toMatch(/^Conflicting regions \(1\): /);
      expect(regions).toContain(
        "<<<<<<< yours\n- [ ] review twice\n||||||| base\n- [ ] review\n=======\n- [x] review\n>>>>>>> current",
      );
      expect(regions).not.toContain("note 11");
      expect(await stored()).toEqual(before);
    });
  });

  it("a scripted agent session: create, 20 appends, one edit, a rejected shrinking replace, recovery; bytes per call", async () => {
    const log: string[] = [];
    const step = async (name: string, args: Record<string, unknown>) => {
      const result = await call(name, args);
      log.push(
        `${name.padEnd(18)} sent ${String(JSON.stringify(args).length).padStart(6)} B, received ${String(text(result).length).padStart(6)} B${result.isError ? "  (rejected)" : ""}`,
      );
      return result;
    };
    await step("create_task_plan", { content: "# Plan\n\nstatus: in progress\n" });
    for (let i = 1; i <= 20; i++) {
      await step("update_task_plan", {
        mode: "append",
        content: `## Step ${i}\n${"- finding ".repeat(12)}\n`,
      });
    }
    const afterAppends = (await stored())?.version ?? 0;
    await step("edit_task_plan", {
      expected_version: afterAppends,
      old_text: "status: in progress",
      new_text: "status: reviewing",
    });
    const shrink = await step("update_task_plan", {
      content: "status: done",
      expected_version: afterAppends + 1,
    });
    expect(text(shrink)).toMatch(/reason=REDUCTION_NOT_ACKNOWLEDGED/);
    // Recovery: read, then replace with the whole document plus the change.
    const read = (await step("get_task_plan", {})) as CallToolResult;
    const meta = JSON.parse(text({ content: [read.content[0]] }).replace(/^Plan metadata:\n/, ""));
    const doc = text({ content: [read.content[1]] });
    await step("update_task_plan", {
      content: doc.replace("status: reviewing", "status: done"),
      expected_version: meta.version,
    });
    const final = (await stored())?.content ?? "";
    expect(final).toContain("status: done");
    expect(final.match(/^## Step \d+$/gm)).toHaveLength(20);
    console.log(`[mcp agent session]\n${log.join("\n")}`);
  });
});

describe("MCP transports and credentials", () => {
  const SECRET = "mcp-transport-secret-0123456789abcdef";
  let app: TestApp;
  let taskId: string;
  let token: string;

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
    await owner.plans.createPlan({ taskId, content: "# Shared plan" });
  });
  afterAll(() => app.stop());

  it("forwards the caller's token as call credentials; without one the service says TOKEN_MISSING", async () => {
    const grpc = connectPlanService(`127.0.0.1:${app.port}`);
    const withToken = await mcpClient(grpc, { taskId, token });
    expect(text(await withToken.callTool({ name: "get_task_plan", arguments: {} }))).toContain(
      "# Shared plan",
    );
    const without = await mcpClient(grpc, { taskId });
    expect(text(await without.callTool({ name: "get_task_plan", arguments: {} }))).toContain(
      "reason=TOKEN_MISSING;",
    );
    await withToken.close();
    await without.close();
    grpc.close();
  });

  it("auth failures say how to configure a token; a token no header can carry is refused before the call", async () => {
    const grpc = connectPlanService(`127.0.0.1:${app.port}`);
    try {
      const without = await mcpClient(grpc, { taskId });
      const missing = text(
        await without.callTool({ name: "update_task_plan", arguments: { mode: "append", content: "x" } }),
      );
      expect(missing).toMatch(/^Plan was not changed: Authentication required/);
      expect(missing).toContain(`reason=TOKEN_MISSING; next_action=${CONFIGURE_TOKEN}`);
      expect(missing).not.toMatch(/Retry later/);
      await without.close();
      const garbled = await mcpClient(grpc, { taskId, token: "t\u00f6k\u00e9n with spaces" });
      const invalid = text(
        await garbled.callTool({ name: "update_task_plan", arguments: { mode: "append", content: "x" } }),
      );
      expect(invalid).toMatch(
        /^Plan was not changed because the configured bearer token contains characters/,
      );
      expect(invalid).toContain(`reason=TOKEN_INVALID; next_action=${CONFIGURE_TOKEN}`);
      expect(invalid).not.toMatch(/INTERNAL|UNKNOWN/);
      await garbled.close();
      expect((await app.client(token).plans.getPlan({ taskId })).plan?.content).toBe("# Shared plan");
    } finally {
      grpc.close();
    }
  });

  it("a read tool's auth failure says the plan was not read, never that it was not changed", async () => {
    const grpc = connectPlanService(`127.0.0.1:${app.port}`);
    try {
      const without = await mcpClient(grpc, { taskId });
      const reads: [string, Record<string, unknown>][] = [
        ["get_task_plan", {}],
        ["list_task_plan_revisions", {}],
        ["get_task_plan_revision", { revision_id: "00000000-0000-4000-8000-000000000000" }],
      ];
      for (const [name, args] of reads) {
        const answer = text(await without.callTool({ name, arguments: args }));
        expect([name, answer]).toEqual([
          name,
          expect.stringMatching(/^The plan was not read: Authentication required/),
        ]);
        expect(answer).toContain(`reason=TOKEN_MISSING; next_action=${CONFIGURE_TOKEN}`);
        expect(answer).not.toMatch(/not changed/);
      }
      await without.close();
      const garbled = await mcpClient(grpc, { taskId, token: "t\u00f6k\u00e9n with spaces" });
      const invalid = text(await garbled.callTool({ name: "get_task_plan", arguments: {} }));
      expect(invalid).toMatch(
        /^The plan was not read because the configured bearer token contains characters/,
      );
      expect(invalid).not.toMatch(/not changed/);
      await garbled.close();
    } finally {
      grpc.close();
    }
  });

  it("tool arguments nested 500,000 levels deep are JSON-RPC -32602 over stdio, in one short line; the server goes on", async () => {
    const bin = spawn(process.execPath, [BIN, "--target", `127.0.0.1:${app.port}`, "--task-id", taskId], {
      env: { PATH: process.env.PATH ?? "", PLAN_MCP_TOKEN: token },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const answers = new Map<number, { error?: { code: number; message: string }; result?: CallToolResult }>();
    const waiting = new Map<number, () => void>();
    let buffered = "";
    let stderr = "";
    bin.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    bin.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const answer = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        answers.set(answer.id, answer);
        waiting.get(answer.id)?.();
      }
    });
    const exited = new Promise<number | null>((resolve) => bin.once("exit", (code) => resolve(code)));
    const ask = (id: number, line: string) => {
      const answered = new Promise<void>((resolve) => waiting.set(id, resolve));
      bin.stdin.write(`${line}\n`);
      return answered.then(() => answers.get(id));
    };
    try {
      const before = (await app.client(token).plans.getPlan({ taskId })).plan;
      await ask(0, JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: INITIALIZE }));
      bin.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      for (const [id, line] of deeplyNestedToolCalls(500_000).entries()) {
        const answer = await ask(id + 1, line);
        expect(answer?.error?.code).toBe(-32602);
        expect(answer?.error?.message).toMatch(/^Invalid params: /);
        expect(answer?.error?.message.length).toBeLessThan(200); // no schema or validation dump
      }
      // Still serving: a normal call afterwards is answered, and nothing was written.
      const read = await ask(
        9,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/call",
          params: { name: "get_task_plan", arguments: {} },
        }),
      );
      expect(read?.result?.isError).toBeUndefined();
      expect((await app.client(token).plans.getPlan({ taskId })).plan).toEqual(before);
      expect(stderr).toBe("");
    } finally {
      bin.stdin.end(); // stdio servers end with their input
      await exited;
    }
  });

  it("serves over stdio (the taskplans-mcp bin)", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        join(__dirname, "..", "..", "..", "mcp", "dist", "main.js"),
        "--target",
        `127.0.0.1:${app.port}`,
        "--task-id",
        taskId,
      ],
      env: { PATH: process.env.PATH ?? "", PLAN_MCP_TOKEN: token },
      stderr: "ignore",
    });
    const client = new Client({ name: "stdio-agent", version: "1.0.0" });
    await client.connect(transport);
    const result = text(
      await client.callTool({
        name: "update_task_plan",
        arguments: { mode: "append", content: "## via stdio" },
      }),
    );
    expect(result).toMatch(/^Plan appended successfully/);
    await client.close();
    expect((await app.client(token).plans.getPlan({ taskId })).plan?.content).toContain("## via stdio");
  });

  it("serves over Streamable HTTP with the caller's bearer token", async () => {
    const grpc = connectPlanService(`127.0.0.1:${app.port}`);
    const http = await startMcpHttpServer({ client: grpc, taskId, host: "127.0.0.1", port: 0 });
    const client = new Client({ name: "http-agent", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${http.port}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      expect(text(await client.callTool({ name: "get_task_plan", arguments: {} }))).toContain(
        "# Shared plan",
      );
    } finally {
      await client.close();
      await http.close();
      grpc.close();
    }
  });
});
