import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { TaskPlansClient } from "@taskplans/client";
import { aliasesOf, aliasTable, createPlanMcpServer, normalizeArguments } from "@taskplans/mcp";

// The argument names agents use (issue 56, item 4): the pure rule, from a table, and the docs table
// kept equal to the tools' own names.
const EDIT = [
  "task_id",
  "expected_version",
  "old_text",
  "new_text",
  "acknowledge_reduction",
  "request_id",
  "merge",
];

describe("normalizeArguments (mcp/src/tools/argument-aliases.ts)", () => {
  const accepted: [string, Record<string, unknown>, readonly string[], Record<string, unknown>][] = [
    ["canonical names as they are", { old_text: "a", new_text: "b" }, EDIT, { old_text: "a", new_text: "b" }],
    [
      "Claude Code's Edit names",
      { old_string: "a", new_string: "b" },
      EDIT,
      { old_text: "a", new_text: "b" },
    ],
    ["the text-editor tool's names", { old_str: "a", new_str: "b" }, EDIT, { old_text: "a", new_text: "b" }],
    ["camelCase edit names", { oldString: "a", newText: "b" }, EDIT, { old_text: "a", new_text: "b" }],
    [
      "camelCase of every snake_case name",
      { taskId: "t", expectedVersion: 3, acknowledgeReduction: true, requestId: "r" },
      EDIT,
      { task_id: "t", expected_version: 3, acknowledge_reduction: true, request_id: "r" },
    ],
    ["canonical and alias equal: taken once", { old_text: "a", old_string: "a" }, EDIT, { old_text: "a" }],
    ["two aliases equal: taken once", { old_str: "a", old_string: "a" }, EDIT, { old_text: "a" }],
    [
      "equal values compared as JSON",
      { expected_version: 2, expectedVersion: 2 },
      EDIT,
      { expected_version: 2 },
    ],
    ["nothing given", {}, EDIT, {}],
    [
      "a name with no alias",
      { content: "x", mode: "append" },
      ["content", "mode"],
      { content: "x", mode: "append" },
    ],
    [
      "sinceVersion where since_version exists",
      { sinceVersion: 1 },
      ["task_id", "since_version"],
      { since_version: 1 },
    ],
  ];
  it.each(accepted)("accepts %s", (_, given, canonical, expected) => {
    const before = JSON.stringify(given);
    expect(normalizeArguments(given, canonical)).toEqual({ ok: true, arguments: expected });
    expect(JSON.stringify(given)).toBe(before);
  });

  const refused: [string, Record<string, unknown>, readonly string[], string, RegExp][] = [
    [
      "canonical and alias differ",
      { old_text: "a", old_string: "b" },
      EDIT,
      "CONFLICTING_ARGUMENTS",
      /^old_text and old_string name the same argument \(old_text\) but have different values; pass it once, as old_text$/,
    ],
    [
      "the canonical name is named first whatever the order given",
      { expectedVersion: 1, expected_version: 2 },
      EDIT,
      "CONFLICTING_ARGUMENTS",
      /^expected_version and expectedVersion name the same argument/,
    ],
    [
      "two aliases differ",
      { old_string: "a", old_str: "b" },
      EDIT,
      "CONFLICTING_ARGUMENTS",
      /^old_string and old_str name the same argument \(old_text\)/,
    ],
    [
      "one given, the other undefined",
      { old_text: "a", old_string: undefined },
      EDIT,
      "CONFLICTING_ARGUMENTS",
      /old_text and old_string/,
    ],
    [
      "an unknown name",
      { old_text: "a", replace_all: true },
      EDIT,
      "UNKNOWN_ARGUMENT",
      /^unknown argument "replace_all"; the accepted arguments are task_id, expected_version, old_text, new_text, acknowledge_reduction, request_id, merge \(aliases are accepted too: .*expectedVersion.*old_string\/old_str\/oldString\/oldStr for old_text/,
    ],
    [
      "two unknown names",
      { path: "x", file_path: "y" },
      EDIT,
      "UNKNOWN_ARGUMENT",
      /^unknown arguments "path", "file_path"; the accepted arguments are/,
    ],
    [
      "an alias of a name the tool does not have",
      { sinceVersion: 1 },
      EDIT,
      "UNKNOWN_ARGUMENT",
      /^unknown argument "sinceVersion"/,
    ],
  ];
  it.each(refused)("refuses %s", (_, given, canonical, reason, message) => {
    const result = normalizeArguments(given, canonical);
    expect(result).toEqual({ ok: false, reason, message: expect.stringMatching(message) });
  });

  it("aliasesOf: camelCase first, then the edit tools' names; a name without _ has only its extras", () => {
    expect(aliasesOf("expected_revision_version")).toEqual(["expectedRevisionVersion"]);
    expect(aliasesOf("old_text")).toEqual(["oldText", "old_string", "old_str", "oldString", "oldStr"]);
    expect(aliasesOf("content")).toEqual([]);
  });
});

describe("the tools' advertised schemas and docs/mcp.md's alias table", () => {
  let tools: Awaited<ReturnType<Client["listTools"]>>["tools"];
  beforeAll(async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createPlanMcpServer({ client: {} as TaskPlansClient, subscriptions: false }).connect(serverSide);
    const client = new Client({ name: "unit", version: "1" });
    await client.connect(clientSide);
    tools = (await client.listTools()).tools;
    await client.close();
  });
  const names = () => tools.flatMap((tool) => Object.keys(tool.inputSchema.properties ?? {}));

  it("advertise only the canonical names, with old_text and new_text still required", () => {
    const aliases = new Set(names().flatMap((name) => aliasesOf(name)));
    expect(names().filter((name) => aliases.has(name))).toEqual([]);
    const edit = tools.find((tool) => tool.name === "edit_task_plan");
    expect(edit?.inputSchema.required).toEqual(expect.arrayContaining(["old_text", "new_text"]));
  });

  it("docs/mcp.md lists every alias of every tool argument, and no other", () => {
    const doc = readFileSync(join(__dirname, "..", "..", "docs", "mcp.md"), "utf8");
    const section = doc.split("## The argument names agents use")[1]?.split("\n## ")[0] ?? "";
    const rows = section
      .split("\n")
      .filter((line) => /^\| `/.test(line))
      .map((line) => line.split("|").map((cell) => cell.trim().replace(/`/g, "")))
      .map(([, name, aliases]) => [name, (aliases ?? "").split(", ")]);
    const expected = aliasTable(names()).filter(([, aliases]) => aliases.length > 0);
    expect(rows).toEqual(expected.map(([name, aliases]) => [name, [...aliases]]));
    for (const [name, aliases] of aliasTable(names()))
      if (aliases.length === 0)
        expect([name, section]).toEqual([name, expect.stringContaining(`\`${name}\``)]);
  });
});
