import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { AuthorKind, type PlanRevision, type TaskPlansClient, WriteMode } from "@taskplans/client";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { type InstalledPlanctl, installPlanctl } from "../../harness/packages/planctl";
import { waitFor } from "../../harness/servers/processes";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// planctl export and import as users use them (issue 46): the packed CLI run as a process, an
// export of an embedded-default (SQLite) deployment holding hostile text imported into MariaDB
// behind two replicas (Redlock over Redis, auth on, an operator's token), every revision then
// compared field by field and byte by byte through the API; an import killed halfway and run again;
// damaged files refused with their line numbers; --dry-run; a token that is not an operator's.

const SECRET = "export-import-test-secret-0123456789abcdef";
const OPERATOR = "ops-robot";
// Control characters (NUL, ESC, BEL), the line and paragraph separators, a BOM, bidi overrides,
// astral characters and combining marks: agent text is kept exactly, whatever it holds.
const HOSTILE =
  "# Plan \u0000 nul\r\n- \u001b[31mred\u001b[0m \u0007 bell\u2028line sep\u2029para sep\n" +
  "- \ufeffbom \u202eevil\u202c \u{1F600}\u{1D11E}\u{10FFFF} e\u0301\n";

async function tokenFor(subject: string, workspaces: string[]): Promise<string> {
  return new SignJWT({ kind: "user", name: subject, workspaces })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime("30m")
    .sign(new TextEncoder().encode(SECRET));
}

/** Every revision of a task through the public reads: ListPlanRevisions pages, then GetPlanRevision each. */
async function revisionsOf(client: TaskPlansClient, taskId: string): Promise<PlanRevision[]> {
  const metas: PlanRevision[] = [];
  let pageToken = "";
  do {
    const page = await client.plans.listPlanRevisions({ taskId, pageSize: 100, pageToken });
    metas.push(...page.revisions);
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  const full: PlanRevision[] = [];
  for (let i = 0; i < metas.length; i += 50)
    full.push(
      ...(await Promise.all(
        metas.slice(i, i + 50).map(async (meta) => {
          const { revision } = await client.plans.getPlanRevision({ taskId, revisionId: meta.id });
          if (!revision) throw new Error(`revision ${meta.id} is missing`);
          return revision;
        }),
      )),
    );
  // revision_version is the deployment's own token (not carried over); everything else must match.
  return full
    .map(({ revisionVersion: _own, ...rest }) => rest as PlanRevision)
    .sort((a, b) => a.revisionNumber - b.revisionNumber);
}

/** What the API shows of a task: the task, its plan (content included) and every revision. */
async function stateOf(client: TaskPlansClient, taskId: string) {
  const { task } = await client.tasks.getTask({ taskId });
  const plan = await client.plans.getPlan({ taskId }).then(
    (response) => response.plan,
    (error: { reason?: string }) => `no plan: ${error.reason ?? "?"}`,
  );
  return { task, plan, revisions: await revisionsOf(client, taskId) };
}

describe("planctl export and import: SQLite to MariaDB behind two replicas, byte-exact", () => {
  let work: string;
  let source: TestApp;
  let replicas: TestApp[];
  let redis: RedisNode[];
  let cli: InstalledPlanctl;
  let operator: string;
  const workspace = randomId("ws-exp");
  const ids = {
    hostile: randomId("hostile"),
    large: randomId("large"),
    long: randomId("long"),
    deleted: randomId("deleted"),
    empty: randomId("empty"),
  };
  let file: string;
  const targetOf = (app: TestApp) => `127.0.0.1:${app.port}`;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "taskplans-export-"));
    source = await startTestApp("sqlite");
    redis = await startRedisNodes(1);
    const env = {
      PLAN_AUTH_JWT_SECRET: SECRET,
      PLAN_AUTH_OPERATOR_SUBJECTS: `someone-else, ${OPERATOR}`,
      PLAN_REDIS_URLS: redis.map((node) => node.url).join(","),
    };
    const first = await startTestApp("mysql", { env });
    replicas = [
      first,
      await startTestApp("mysql", { env: { ...env, PLAN_DATABASE_URL: first.databaseUrl } }),
    ];
    cli = await installPlanctl(work, targetOf(source));
    operator = await tokenFor(OPERATOR, [workspace]);

    // The source deployment (auth off): five tasks that between them hold every kind of record.
    const { plans, tasks } = source;
    for (const taskId of Object.values(ids))
      await tasks.createTask({ taskId, workspaceId: workspace, title: `task \u{1F680} ${taskId}` });
    const agent = (name: string) => ({ kind: AuthorKind.AUTHOR_KIND_AGENT, name });
    // Hostile text, coalesced revisions, a merge marker, a revert marker, the implementation mark.
    const created = await plans.createPlan({
      taskId: ids.hostile,
      content: `a\n${HOSTILE}c\n`,
      author: agent("ann"),
    });
    await plans.updatePlan({
      taskId: ids.hostile,
      content: HOSTILE,
      mode: WriteMode.WRITE_MODE_APPEND,
      author: agent("ann"),
    }); // coalesced into revision 1 (same author within the window)
    const base = (await plans.getPlan({ taskId: ids.hostile })).plan?.content ?? "";
    await plans.updatePlan({
      taskId: ids.hostile,
      content: `A${base.slice(1)}`,
      author: agent("bob"),
      expectedVersion: 2,
    });
    // Based on version 2 and merged with bob's version 3: a merge marker 2..3.
    await plans.updatePlan({
      taskId: ids.hostile,
      content: `${base}\nC \u{1F4A5}\n`,
      author: agent("cy"),
      expectedVersion: 2,
      merge: true,
    });
    await plans.revertPlan({
      taskId: ids.hostile,
      revisionId: created.revision?.id ?? "",
      author: agent("dee"),
    });
    await plans.markImplementationStarted({ taskId: ids.hostile, sessionId: "s-1", actor: "ann \u{1F600}" });
    // A 250 KiB plan of astral characters (4 bytes each).
    await plans.createPlan({ taskId: ids.large, content: "\u{1F600}".repeat(64_000) });
    // 1,000 revisions: alternating authors, so that none coalesces into the one before.
    await plans.createPlan({ taskId: ids.long, content: "# Log\n", author: agent("w0") });
    for (let i = 1; i < 1_000; i++)
      await plans.updatePlan({
        taskId: ids.long,
        content: `- entry ${i} \u0000 \u2028`,
        mode: WriteMode.WRITE_MODE_APPEND,
        author: agent(`w${i % 2}`),
      });
    // A deleted plan (its tombstone and revisions), and a task that never had a plan.
    await plans.createPlan({ taskId: ids.deleted, content: "gone \u{1F47B}\n" });
    await plans.deletePlan({ taskId: ids.deleted });

    file = join(work, "export.jsonl");
    const exported = await cli.run(["export", "--workspace", workspace, "-f", file, "-o", "json"]);
    expect([exported.code, exported.stderr]).toEqual([0, ""]);
    expect(JSON.parse(exported.stdout)).toEqual(
      expect.objectContaining({ file, tasks: 5, revisions: 4 + 1 + 1_000 + 1 }),
    );
  }, 600_000);

  afterAll(async () => {
    await source?.stop();
    for (const replica of replicas ?? []) await replica.stop();
    for (const node of redis ?? []) await node.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the file is versioned line-delimited JSON: a header, then per task its lines and a checksummed end", () => {
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(JSON.parse(lines[0] ?? "")).toEqual({
      type: "header",
      format: "planctl-export",
      version: 1,
      exported_at: expect.any(String),
      tasks: 5,
    });
    expect(JSON.parse(lines[lines.length - 1] ?? "")).toEqual({ type: "end-of-export", tasks: 5 });
    const types = lines.map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.filter((type) => type === "task")).toHaveLength(5);
    expect(types.filter((type) => type === "end")).toHaveLength(5);
    // No raw control character or line separator: every line is one line, whatever the plans hold.
    // eslint-disable-next-line no-control-regex -- control characters are what is looked for
    for (const line of lines) expect(/[\u0000-\u001f\u2028\u2029]/.test(line)).toBe(false);
  });

  it("imported into MariaDB through one replica, every task and revision reads back exactly through the other", async () => {
    const [a, b] = replicas as [TestApp, TestApp];
    const imported = await cli.run(["import", file, "--target", targetOf(a), "-o", "json"], {
      env: { PLANCTL_TOKEN: operator },
    });
    expect([imported.code, imported.stderr]).toEqual([0, ""]);
    expect(JSON.parse(imported.stdout)).toEqual(
      expect.objectContaining({
        tasks: 5,
        created: 5,
        unchanged: 0,
        overwritten: 0,
        failed: [],
        dry_run: false,
      }),
    );
    const reader = b.client(operator);
    for (const taskId of Object.values(ids)) {
      const [expected, actual] = [await stateOf(source, taskId), await stateOf(reader, taskId)];
      expect(actual).toEqual(expected);
    }
    const hostile = await stateOf(reader, ids.hostile);
    expect(
      hostile.revisions.map((r) => [
        r.revisionNumber,
        r.authorName,
        r.revertOfRevisionId ?? null,
        r.merge ?? null,
      ]),
    ).toEqual([
      [1, "ann", null, null],
      [2, "bob", null, null],
      [3, "cy", null, { fromVersion: 2, toVersion: 3 }],
      [4, "dee", hostile.revisions[0]?.id, null],
    ]);
    expect((await stateOf(reader, ids.long)).revisions).toHaveLength(1_000);
    expect((await reader.plans.getPlan({ taskId: ids.large })).plan?.contentBytes).toBe(256_000);

    // Run again, through the other replica: every task is verified and reported unchanged.
    const again = await cli.run(["import", file, "--target", targetOf(b), "-o", "json"], {
      env: { PLANCTL_TOKEN: operator },
    });
    expect([again.code, JSON.parse(again.stdout)]).toEqual([
      0,
      expect.objectContaining({ tasks: 5, created: 0, unchanged: 5 }),
    ]);
    // And an export of the target is the source's file, line for line (but the header's time).
    const copy = join(work, "copy.jsonl");
    expect(
      (
        await cli.run(["export", ...Object.values(ids).sort(), "--target", targetOf(b), "-f", copy], {
          env: { PLANCTL_TOKEN: operator },
        })
      ).code,
    ).toBe(0);
    const body = (path: string) => readFileSync(path, "utf8").split("\n").slice(1).sort();
    expect(body(copy)).toEqual(body(file));
  });

  it("ExportTask's pages are bound to the first page's snapshot: a write between two pages is EXPORT_CHANGED", async () => {
    const taskId = randomId("paged");
    await source.tasks.createTask({ taskId, workspaceId: randomId("ws-paged") });
    // 12 revisions of 100 KiB (titles of 1,000 astral characters): several pages under 1 MiB each.
    const title = "\u{1F600}".repeat(1_000);
    for (let i = 0; i < 12; i++)
      await source.plans.savePlan({
        taskId,
        title,
        content: `${i}`.repeat(100 * 1024),
        author: { kind: AuthorKind.AUTHOR_KIND_USER, name: `u${i % 2}` },
      });
    const first = await source.tasks.exportTask({ taskId });
    expect([first.more, first.revisionCount, first.revisions.length < 12]).toEqual([true, 12, true]);
    const after = first.revisions[first.revisions.length - 1]?.revision?.revisionNumber ?? 0;
    await source.plans.updatePlan({ taskId, content: "- more", mode: WriteMode.WRITE_MODE_APPEND });
    await expect(
      source.tasks.exportTask({ taskId, afterRevisionNumber: after, snapshot: first.snapshot }),
    ).rejects.toMatchObject({ reason: "EXPORT_CHANGED" });
    // Read again from the first page: every page at the new snapshot, 13 revisions in order.
    let page = await source.tasks.exportTask({ taskId });
    const numbers = page.revisions.map((r) => r.revision?.revisionNumber);
    while (page.more) {
      const last = page.revisions[page.revisions.length - 1]?.revision?.revisionNumber ?? 0;
      page = await source.tasks.exportTask({ taskId, afterRevisionNumber: last, snapshot: page.snapshot });
      numbers.push(...page.revisions.map((r) => r.revision?.revisionNumber));
    }
    expect(numbers).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
  });

  it("on a terminal both draw a progress bar on stderr: tasks, revisions, MiB, MiB/s and the ETA", async () => {
    const [a] = replicas as [TestApp];
    const path = join(work, "terminal.jsonl");
    const exported = await cli.runOnTerminal(["export", ids.long, ids.large, "-f", path]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(
      /export \S+ 2\/2 tasks \| 1001 revisions \| [\d.]+ MiB \| [\d.]+ MiB\/s \| ETA \d+s/,
    );
    const imported = await cli.runOnTerminal(["import", path, "--target", targetOf(a)], {
      env: { PLANCTL_TOKEN: operator },
    });
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/import \S+ 2\/2 tasks \| 1001 revisions \| [\d.]+ MiB/);
    expect(imported.stdout).toContain("0 created, 2 unchanged");
  });

  it("a task changed on the target is IMPORT_CONFLICT (unchanged); --dry-run changes nothing; --overwrite restores it", async () => {
    const [a] = replicas as [TestApp];
    const client = a.client(operator);
    const taskId = ids.hostile;
    await client.plans.updatePlan({ taskId, content: "- local change", mode: WriteMode.WRITE_MODE_APPEND });
    const before = await stateOf(client, taskId);
    const asOperator = { env: { PLANCTL_TOKEN: operator } };

    const refused = await cli.run(["import", file, "--target", targetOf(a)], asOperator);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`not imported: ${taskId}: IMPORT_CONFLICT: line \\d+: `));
    expect(refused.stderr).toMatch(/reason: IMPORT_CONFLICT\n/);
    expect(await stateOf(client, taskId)).toEqual(before);

    const dry = await cli.run(
      ["import", file, "--target", targetOf(a), "--dry-run", "--overwrite", "-o", "json"],
      asOperator,
    );
    expect([dry.code, JSON.parse(dry.stdout)]).toEqual([
      0,
      expect.objectContaining({ overwritten: 1, unchanged: 4, dry_run: true }),
    ]);
    expect(await stateOf(client, taskId)).toEqual(before);

    const overwritten = await cli.run(
      ["import", file, "--target", targetOf(a), "--overwrite", "-o", "json"],
      asOperator,
    );
    expect([overwritten.code, JSON.parse(overwritten.stdout)]).toEqual([
      0,
      expect.objectContaining({ overwritten: 1, unchanged: 4 }),
    ]);
    expect(await stateOf(client, taskId)).toEqual(await stateOf(source, taskId));
  });

  it("a token that is not an operator's is refused IMPORT_NOT_PERMITTED and nothing is created", async () => {
    const [a] = replicas as [TestApp];
    const taskId = randomId("not-op");
    await source.tasks.createTask({ taskId, workspaceId: workspace });
    await source.plans.createPlan({ taskId, content: "x" });
    const one = join(work, "one.jsonl");
    expect((await cli.run(["export", taskId, "-f", one])).code).toBe(0);
    const agentToken = await tokenFor("agent-7", [workspace]);
    const refused = await cli.run(["import", one, "--target", targetOf(a)], {
      env: { PLANCTL_TOKEN: agentToken },
    });
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/IMPORT_NOT_PERMITTED/)]);
    const check = a.client(operator);
    await expect(check.tasks.getTask({ taskId })).rejects.toMatchObject({ reason: "TASK_NOT_REACHABLE" });
    const listed = await check.tasks.listTasks({ workspaceId: workspace, pageSize: 1000 });
    expect(listed.tasks.map((task) => task.taskId).sort()).toEqual(Object.values(ids).sort());
  });

  describe("damaged files, into a fresh MariaDB database (auth off)", () => {
    let fresh: TestApp;
    const lines = () => readFileSync(file, "utf8").split("\n");
    const lineOf = (all: string[], predicate: (record: Record<string, unknown>) => boolean) =>
      all.findIndex((line) => line !== "" && predicate(JSON.parse(line) as Record<string, unknown>));
    beforeAll(async () => {
      fresh = await startTestApp("mysql");
    });
    afterAll(async () => {
      await fresh?.stop();
    });
    afterEach(async () => {
      for (const taskId of Object.values(ids))
        await fresh.tasks.deleteTask({ taskId }).catch(() => undefined);
    });

    // Imports `text`; expects exit 1 naming `lineNumber`, nothing of `damaged`, and every other task.
    async function refusesOnly(text: string, damaged: string, lineNumber: number) {
      const path = join(work, `damaged-${randomId("f")}.jsonl`);
      writeFileSync(path, text);
      const result = await cli.run(["import", path, "--target", targetOf(fresh)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`not imported: ${damaged}: IMPORT_FILE_DAMAGED: line ${lineNumber}:`);
      expect(result.stderr).toMatch(/reason: IMPORT_FILE_DAMAGED\n/);
      await expect(fresh.tasks.getTask({ taskId: damaged })).rejects.toMatchObject({
        reason: "TASK_NOT_FOUND",
      });
      // The others are imported (compared byte for byte in the test above; here their plans).
      for (const taskId of Object.values(ids).filter((id) => id !== damaged)) {
        const plan = async (app: TestApp) =>
          app.plans.getPlan({ taskId }).then(
            (response) => response.plan,
            (error: { reason?: string }) => error.reason,
          );
        expect(await plan(fresh)).toEqual(await plan(source));
      }
    }

    it("ImportTask itself refuses a stream that is not one consistent task (IMPORT_INVALID) and writes nothing", async () => {
      const page = await source.tasks.exportTask({ taskId: ids.hostile });
      const start = { task: page.task, head: page.head, revisionCount: page.revisionCount + 1 };
      await expect(
        fresh.tasks.importTask([{ start }, { revisions: { revisions: page.revisions } }]),
      ).rejects.toMatchObject({ reason: "IMPORT_INVALID" });
      await expect(fresh.tasks.getTask({ taskId: ids.hostile })).rejects.toMatchObject({
        reason: "TASK_NOT_FOUND",
      });
    });

    it("the target's history budget holds: a task past it is HISTORY_QUOTA_EXCEEDED and not written, the others are imported", async () => {
      const small = await startTestApp("sqlite", { env: { PLAN_HISTORY_MAX_REVISIONS: "10" } });
      try {
        const result = await cli.run(["import", file, "--target", targetOf(small)]);
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(
          new RegExp(`not imported: ${ids.long}: HISTORY_QUOTA_EXCEEDED: line \\d+: `),
        );
        await expect(small.tasks.getTask({ taskId: ids.long })).rejects.toMatchObject({
          reason: "TASK_NOT_FOUND",
        });
        expect((await small.plans.getPlan({ taskId: ids.hostile })).plan?.content).toBe(
          (await source.plans.getPlan({ taskId: ids.hostile })).plan?.content,
        );
      } finally {
        await small.stop();
      }
    });

    it("a revision line cut short (not JSON) refuses that task with its line number", async () => {
      const all = lines();
      const index = lineOf(all, (r) => r.type === "revision" && r.task_id === ids.long && r.number === 500);
      all[index] = (all[index] ?? "").slice(0, 40);
      await refusesOnly(all.join("\n"), ids.long, index + 1);
    });

    it("one changed byte of content (valid JSON) fails the task's checksum at its end line", async () => {
      const all = lines();
      const index = lineOf(all, (r) => r.type === "revision" && r.task_id === ids.hostile && r.number === 2);
      all[index] = (all[index] ?? "").replace('"A\\n', '"B\\n');
      const end = lineOf(all, (r) => r.type === "end" && r.task_id === ids.hostile);
      await refusesOnly(all.join("\n"), ids.hostile, end + 1);
    });

    it("a file cut inside its last task refuses that task (truncated)", async () => {
      const all = lines().filter((line) => line !== "");
      const lastTask =
        all.length - 1 - [...all].reverse().findIndex((line) => line.includes('"type":"task"'));
      const taskId = (JSON.parse(all[lastTask] ?? "") as { task_id: string }).task_id;
      const kept = all.slice(0, lastTask + 1);
      await refusesOnly(`${kept.join("\n")}\n`, taskId, kept.length);
    });
  });
});

describe("planctl import killed halfway (SIGKILL) and run again", () => {
  let work: string;
  let source: TestApp;
  let target: TestApp;
  let cli: InstalledPlanctl;
  const workspace = randomId("ws-kill");
  const TASKS = 150;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "taskplans-import-kill-"));
    [source, target] = [await startTestApp("sqlite"), await startTestApp("mysql")];
    cli = await installPlanctl(work, `127.0.0.1:${source.port}`);
    for (let i = 0; i < TASKS; i++) {
      const taskId = `kill-${String(i).padStart(3, "0")}-${randomId("t")}`;
      await source.tasks.createTask({ taskId, workspaceId: workspace });
      await source.plans.createPlan({ taskId, content: `# ${i} \u{1F600}\n${"x".repeat(2_000)}\n` });
      for (let j = 0; j < 3; j++)
        await source.plans.updatePlan({
          taskId,
          content: `- ${j}`,
          mode: WriteMode.WRITE_MODE_APPEND,
          author: { kind: AuthorKind.AUTHOR_KIND_AGENT, name: `a${j}` },
        });
    }
  }, 600_000);
  afterAll(async () => {
    await source?.stop();
    await target?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the second run imports the rest, verifies the first run's tasks, and the target is the source", async () => {
    const file = join(work, "all.jsonl");
    expect((await cli.run(["export", "--workspace", workspace, "-f", file])).code).toBe(0);
    const count = async () =>
      (await target.tasks.listTasks({ workspaceId: workspace, pageSize: 1000 })).tasks.length;
    const child = spawn(cli.bin, ["import", file, "--target", `127.0.0.1:${target.port}`], {
      env: { ...process.env, ...cli.env },
      stdio: "ignore",
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    await waitFor("5 tasks imported", async () => (await count()) >= 5, 60_000);
    child.kill("SIGKILL");
    await exited;
    const before = await count();
    expect(before).toBeGreaterThanOrEqual(5);
    expect(before).toBeLessThan(TASKS); // killed halfway

    const rerun = await cli.run(["import", file, "--target", `127.0.0.1:${target.port}`, "-o", "json"]);
    expect(rerun.code).toBe(0);
    const summary = JSON.parse(rerun.stdout) as { created: number; unchanged: number; tasks: number };
    expect(summary.tasks).toBe(TASKS);
    expect(summary.unchanged).toBeGreaterThanOrEqual(before - 1); // the task in flight may have committed
    expect(summary.created + summary.unchanged).toBe(TASKS);
    expect(await count()).toBe(TASKS);
    const copy = join(work, "copy.jsonl");
    expect(
      (
        await cli.run([
          "export",
          "--workspace",
          workspace,
          "--target",
          `127.0.0.1:${target.port}`,
          "-f",
          copy,
        ])
      ).code,
    ).toBe(0);
    const body = (path: string) => readFileSync(path, "utf8").split("\n").slice(1);
    expect(body(copy)).toEqual(body(file));
  });
});
