import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runToExit } from "../../harness/servers/processes";
import { repoRoot } from "../../harness/servers/repo-root";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";
import {
  installTarballs,
  type PackedWorkspace,
  packWorkspace,
  WORKSPACES,
} from "../../harness/packages/workspace-packages";

// Each workspace packs alone and installs into an empty project outside the repository, where it is
// imported and called: the contract's codec, the client against a live server, the MCP server's bin
// (STYLE.md habit 13). A package that reaches into the repository's tree fails here.
const ROOT = repoRoot();

// What the outside project runs: plain CommonJS, resolving only from its own node_modules.
const CONSUMER = `
const contract = require("@taskplans/contract");
const { createClient, TaskPlansError } = require("@taskplans/client");
const mcp = require("@taskplans/mcp");
async function main() {
  const [target, taskId] = process.argv.slice(2);
  const trailer = contract.encodeStatusDetails({
    code: 5, message: "gone", errorInfo: { reason: "PLAN_NOT_FOUND", domain: contract.ERROR_DOMAIN, metadata: {} },
    badRequest: null, retryInfo: null,
  });
  const decoded = contract.decodeStatusDetails(trailer);
  const client = createClient(target);
  await client.tasks.createTask({ taskId, workspaceId: "ws-outside", title: "outside" });
  await client.plans.createPlan({ taskId, content: "# from outside\\n" });
  const read = await client.plans.getPlan({ taskId });
  const missing = await client.plans.getPlan({ taskId: taskId + "-none" }).catch((error) => error);
  client.close();
  console.log(JSON.stringify({
    codec: decoded.errorInfo.reason,
    content: read.plan.content,
    missing: missing instanceof TaskPlansError ? missing.codeName : String(missing),
    mcp: [typeof mcp.createPlanMcpServer, typeof mcp.startMcpHttpServer],
  }));
}
main().catch((error) => { console.error(error); process.exit(1); });
`;

describe("the workspaces, each packed and installed into an empty project outside the repository", () => {
  let app: TestApp;
  let work: string;
  const packed: Record<string, PackedWorkspace> = {};

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "taskplans-workspaces-"));
    app = await startTestApp("sqlite");
    // One at a time: the client's prepack builds the contract it references.
    for (const { dir, name } of WORKSPACES) packed[name] = await packWorkspace(dir, work);
  }, 600_000);
  afterAll(async () => {
    await app?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(WORKSPACES)(
    "$name packs its manifest, README and build only, entry point dist/index.js",
    ({ dir, name }) => {
      const files = packed[name]?.files ?? [];
      expect(
        files.filter(
          (path) => !/^dist\/.+\.(js|d\.ts)$/.test(path) && !/^(package\.json|README\.md)$/.test(path),
        ),
      ).toEqual([]);
      expect(files).toEqual(
        expect.arrayContaining(["package.json", "README.md", "dist/index.js", "dist/index.d.ts"]),
      );
      const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"));
      expect([manifest.name, manifest.main, manifest.types]).toEqual([
        name,
        "./dist/index.js",
        "./dist/index.d.ts",
      ]);
    },
  );

  it("the contract installs alone and its codec round-trips a google.rpc.Status", async () => {
    const dir = mkdtempSync(join(work, "contract-"));
    await installTarballs(dir, { "@taskplans/contract": packed["@taskplans/contract"]?.tarball ?? "" });
    const script = `const c = require("@taskplans/contract");
const m = c.encodeStatusDetails({ code: 10, message: "stale", errorInfo: null, badRequest: null, retryInfo: { retryDelay: { seconds: 1, nanos: 0 } } });
console.log(JSON.stringify([c.ERROR_DOMAIN, c.decodeStatusDetails(m).retryInfo, typeof c.PlanServiceClient]));`;
    const run = await runToExit([process.execPath, "-e", script], { cwd: dir, timeoutMs: 60_000 });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual([
      "taskplans",
      { retryDelay: { seconds: 1, nanos: 0 } },
      "function",
    ]);
  }, 300_000);

  it("the client and the MCP server install with the contract and call a live server", async () => {
    const dir = mkdtempSync(join(work, "consumer-"));
    await installTarballs(
      dir,
      Object.fromEntries(WORKSPACES.map(({ name }) => [name, packed[name]?.tarball ?? ""])),
    );
    writeFileSync(join(dir, "consumer.js"), CONSUMER);
    const taskId = randomId("outside");
    const run = await runToExit([process.execPath, "consumer.js", `127.0.0.1:${app.port}`, taskId], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({
      codec: "PLAN_NOT_FOUND",
      content: "# from outside\n",
      missing: "NOT_FOUND",
      mcp: ["function", "function"],
    });

    // The installed bin, as an agent host spawns it.
    const transport = new StdioClientTransport({
      command: join(dir, "node_modules", ".bin", "taskplans-mcp"),
      args: ["--target", `127.0.0.1:${app.port}`, "--task-id", taskId],
      env: { PATH: process.env.PATH ?? "" },
      stderr: "ignore",
    });
    const agent = new Client({ name: "outside-agent", version: "1.0.0" });
    await agent.connect(transport);
    const result = (await agent.callTool({ name: "get_task_plan", arguments: {} })) as {
      content: { type: string; text: string }[];
    };
    await agent.close();
    expect(result.content.map((part) => part.text).join("\n")).toContain("# from outside");
  }, 300_000);
});
