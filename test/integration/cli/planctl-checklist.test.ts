import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type InstalledPlanctl, installPlanctl } from "../../harness/packages/planctl";
import { stopProcess, waitFor } from "../../harness/servers/processes";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// planctl shows the checklist progress the service counted (issue 56, item 3): the packed CLI
// installed into an empty project and run as a process against a real server. get --meta says
// "checklist: 1 of 3 done", history has a checklist column, task get and task list show each task's
// progress, -o json carries checklist {checked, total} as numbers, and a write's line ends with it.

const PLAN = "# P\n\n- [x] a\n- [ ] b\n- [ ] c\n";
const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe("planctl with a plan's checklist progress (packed CLI, real server)", () => {
  let app: TestApp;
  let work: string;
  let cli: InstalledPlanctl;
  const run = (args: readonly string[], options?: Parameters<InstalledPlanctl["run"]>[1]) =>
    cli.run(args, options);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "taskplans-planctl-checklist-"));
    app = await startTestApp("sqlite");
    cli = await installPlanctl(work, `127.0.0.1:${app.port}`);
  }, 600_000);
  afterAll(async () => {
    await app?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  async function task(workspace: string, title: string): Promise<string> {
    const taskId = randomId("cli");
    const created = await run(["task", "create", taskId, "--workspace", workspace, "--title", title]);
    expect(created.code).toBe(0);
    return taskId;
  }

  it("a plan of three boxes shows 1 of 3, and 2 of 3 after a tick, in every command", async () => {
    const workspace = randomId("ws");
    const taskId = await task(workspace, "boxes");
    const created = await run(["create-plan", taskId], { input: PLAN });
    expect([created.code, created.stdout]).toEqual([
      0,
      `${taskId} version 1 ${Buffer.byteLength(PLAN)} bytes revision 1 checklist 1 of 3 done\n`,
    ]);
    const meta = await run(["get", taskId, "--meta"]);
    expect([meta.code, meta.stderr]).toEqual([0, ""]);
    const metaLines = meta.stdout.trimEnd().split("\n");
    expect([metaLines[0], metaLines.at(-1)]).toEqual([`task: ${taskId}`, "checklist: 1 of 3 done"]);
    expect(metaLines).toContain("version: 1");
    expect(meta.stdout).not.toContain("- [x] a"); // the metadata, never the content

    const ticked = await run([
      "edit",
      taskId,
      "--old",
      "- [ ] b",
      "--new",
      "- [x] b",
      "--expected-version",
      "1",
      "--author",
      "bob", // another author: a revision of its own, not coalesced into the first
      "-o",
      "json",
    ]);
    expect(json(ticked.stdout)).toMatchObject({ version: 2, checklist: { checked: 2, total: 3 } });
    expect((await run(["get", taskId, "--meta"])).stdout.split("\n")).toContain("checklist: 2 of 3 done");
    expect(json((await run(["get", taskId, "--meta", "-o", "json"])).stdout)).toMatchObject({
      task_id: taskId,
      version: 2,
      checklist: { checked: 2, total: 3 },
    });
    expect(json((await run(["get", taskId, "-o", "json"])).stdout)).toMatchObject({
      content: PLAN.replace("- [ ] b", "- [x] b"),
      checklist: { checked: 2, total: 3 },
    });

    const history = (await run(["history", taskId])).stdout.split("\n");
    expect(history[0]).toMatch(/^#\s+author\s+kind\s+time\s+coalesced\s+revert-of\s+size\s+checklist$/);
    expect(history[1]).toMatch(/^2\s.*\s\d+ B\s+2\/3$/);
    expect(history[2]).toMatch(/^1\s.*\s\d+ B\s+1\/3$/);
    const revisions = (await run(["history", taskId, "-o", "json"])).stdout.trim().split("\n").map(json);
    expect(revisions.map((r) => [r.number, r.checklist])).toEqual([
      [2, { checked: 2, total: 3 }],
      [1, { checked: 1, total: 3 }],
    ]);

    const got = await run(["task", "get", taskId]);
    expect(got.stdout.split("\n")[0]).toMatch(/^task\s+workspace\s+title\s+created\s+checklist$/);
    expect(got.stdout.split("\n")[1]).toMatch(
      new RegExp(`^${taskId}\\s+${workspace}\\s+boxes\\s+\\S+\\s+2/3$`),
    );
    expect(json((await run(["task", "get", taskId, "-o", "json"])).stdout)).toMatchObject({
      checklist: { checked: 2, total: 3 },
    });
  });

  it("a plan without boxes shows none; a task without a plan shows -; task list shows each task's progress", async () => {
    const workspace = randomId("ws");
    const boxes = await task(workspace, "boxes");
    const plain = await task(workspace, "plain");
    const empty = await task(workspace, "no plan");
    await run(["create-plan", boxes], { input: PLAN });
    const written = await run(["create-plan", plain], { input: "# P\n\n- a\n- b\n" });
    // A write's line adds nothing for a plan without a checklist; its JSON says 0 of 0.
    expect(written.stdout).toBe(`${plain} version 1 13 bytes revision 1\n`);
    expect((await run(["get", plain, "--meta"])).stdout.split("\n")).toContain("checklist: none");
    expect(json((await run(["get", plain, "--meta", "-o", "json"])).stdout).checklist).toEqual({
      checked: 0,
      total: 0,
    });
    expect((await run(["history", plain])).stdout.split("\n")[1]).toMatch(/\s+none$/);

    const listed = await run(["task", "list", "--workspace", workspace]);
    expect([listed.code, listed.stderr]).toEqual([0, ""]);
    const rows = listed.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^task\s+workspace\s+title\s+created\s+checklist$/);
    const byTask = new Map(rows.slice(1).map((row) => [row.split(/\s+/)[0], row.split(/\s+/).at(-1)]));
    expect(Object.fromEntries(byTask)).toEqual({ [boxes]: "1/3", [plain]: "none", [empty]: "-" });
    const asJson = (await run(["task", "list", "--workspace", workspace, "-o", "json"])).stdout
      .trim()
      .split("\n")
      .map(json);
    expect(Object.fromEntries(asJson.map((t) => [t.task_id, t.checklist ?? "absent"]))).toEqual({
      [boxes]: { checked: 1, total: 3 },
      [plain]: { checked: 0, total: 0 },
      [empty]: "absent",
    });
  });

  it("watch prints the progress after each change of a plan with a checklist", async () => {
    const taskId = await task(randomId("ws"), "watched");
    await run(["create-plan", taskId], { input: PLAN });
    const watcher = spawn(cli.bin, ["watch", taskId, "--after", "1"], {
      env: { ...cli.env, PATH: process.env.PATH },
    });
    let printed = "";
    watcher.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    try {
      await run(["edit", taskId, "--old", "- [ ] b", "--new", "- [x] b", "--expected-version", "1"]);
      await waitFor("the tick", async () => printed.includes("\n"), 20_000);
      expect(printed).toMatch(
        / version 2 updated by agent:\S+ revision \d+ \d+ bytes checklist 2 of 3 done\n$/,
      );
    } finally {
      await stopProcess(watcher);
    }
  });
});
