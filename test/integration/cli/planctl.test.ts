import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { type InstalledPlanctl, installPlanctl } from "../../harness/packages/planctl";
import { freePort } from "../../harness/servers/free-port";
import { makeCa } from "../../harness/identity/pki";
import { requireBinary, stopProcess, waitFor } from "../../harness/servers/processes";
import { startReplica } from "../../harness/servers/replica";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// planctl as users use it (issue 46): the packed CLI installed into an empty project and run as a
// process against a real server; every command's success and main refusal, the JSON shapes, the
// exit codes (0 ok, 1 refused, 2 usage, 3 unavailable), contexts, completion, and agent text made
// inert on a terminal.
const HOSTILE =
  "# Plan \u001b[31mred\u001b[0m\n- clip \u001b]52;c;ZXZpbA==\u0007 done\n- c1 \u009b2J and \u202eevil\n- bell \u0007 nul \u0000 end\n";

// On a terminal the only escape sequences planctl prints are its own colours (SGR), and no other
// control character but CR and LF (the pseudo-terminal turns LF into CR LF).
function inert(screen: string): boolean {
  /* eslint-disable no-control-regex -- control characters are what is looked for */
  const withoutColours = screen.replace(/\u001b\[[0-9;]*m/g, "");
  return !/[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(
    withoutColours,
  );
  /* eslint-enable no-control-regex */
}
const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe("planctl, the packed CLI installed into an empty project and run against a live server", () => {
  let app: TestApp;
  let work: string;
  let cli: InstalledPlanctl;
  const run = (args: readonly string[], options?: Parameters<InstalledPlanctl["run"]>[1]) =>
    cli.run(args, options);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "taskplans-planctl-"));
    app = await startTestApp("sqlite");
    cli = await installPlanctl(work, `127.0.0.1:${app.port}`);
  }, 600_000);
  afterAll(async () => {
    await app?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** A new task with a plan written through planctl; its id. */
  async function taskWithPlan(content = "# Plan\n- step one\n"): Promise<string> {
    const taskId = randomId("cli");
    expect((await run(["task", "create", taskId, "--workspace", "ws-1", "--title", "a task"])).code).toBe(0);
    expect((await run(["create-plan", taskId], { input: content })).code).toBe(0);
    return taskId;
  }

  it("task create, get and delete; get of a missing task exits 1 with reason, message and next_action", async () => {
    const taskId = randomId("cli");
    const created = await run([
      "task",
      "create",
      taskId,
      "--workspace",
      "ws-1",
      "--title",
      "Ship it",
      "-o",
      "json",
    ]);
    expect([created.code, created.stderr]).toEqual([0, ""]);
    expect(json(created.stdout)).toEqual({
      task_id: taskId,
      workspace_id: "ws-1",
      title: "Ship it",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const got = await run(["task", "get", taskId]);
    expect(got.stdout).toMatch(
      new RegExp(`^task\\s+workspace\\s+title\\s+created\\s+checklist\\s*\\n${taskId}\\s+ws-1\\s+Ship it`),
    );
    expect((await run(["task", "delete", taskId])).stdout).toBe(`${taskId} deleted\n`);

    const missing = await run(["task", "get", taskId]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(
      /^error: NOT_FOUND\nreason: TASK_NOT_FOUND\nmessage: .+\nnext_action: .+\n$/,
    );
    const asJson = await run(["task", "get", taskId, "-o", "json"]);
    expect([asJson.code, json(asJson.stderr).error]).toEqual([
      1,
      expect.objectContaining({
        code: "NOT_FOUND",
        reason: "TASK_NOT_FOUND",
        next_action: expect.any(String),
      }),
    ]);
  });

  it("create-plan, append (stdin and file) and edit print one acknowledgement line each, never the plan", async () => {
    const taskId = await taskWithPlan("# Plan\n- secret step one\n");
    const fragment = join(cli.home, `${taskId}.md`);
    writeFileSync(fragment, "## Findings\n- secret finding\n");
    const appended = await run(["append", taskId, fragment, "--author", "alice"]);
    expect([appended.code, appended.stderr]).toEqual([0, ""]);
    expect(appended.stdout).toMatch(new RegExp(`^${taskId} version 2 \\d+ bytes revision 2\\n$`));
    const fromStdin = await run(["append", taskId, "-", "-o", "json"], { input: "- more\n" });
    expect(json(fromStdin.stdout)).toEqual({
      task_id: taskId,
      version: 3,
      content_bytes: expect.any(Number),
      content_chars: expect.any(Number),
      revision: { id: expect.any(String), number: expect.any(Number), coalesced: expect.any(Boolean) },
      merge: null,
      truncation: null,
      checklist: { checked: 0, total: 0 }, // a plan without task-list items (issue 56 item 3)
    });
    const edited = await run([
      "edit",
      taskId,
      "--old",
      "step one",
      "--new",
      "step 1",
      "--expected-version",
      "3",
    ]);
    expect(edited.stdout).toMatch(new RegExp(`^${taskId} version 4 \\d+ bytes`));
    for (const output of [appended, fromStdin, edited]) expect(output.stdout).not.toContain("secret");
    expect((await run(["get", taskId])).stdout).toBe(
      "# Plan\n- secret step 1\n\n## Findings\n- secret finding\n\n- more\n",
    );
  });

  it("get pipes the content byte-exact, hostile bytes included; --range, --version and -o json", async () => {
    const taskId = await taskWithPlan(HOSTILE);
    const piped = await run(["get", taskId]);
    expect([piped.code, piped.stdout]).toEqual([0, HOSTILE]);
    expect((await run(["get", taskId, "--version"])).stdout).toBe("1\n");
    expect((await run(["get", taskId, "--range", "2:6"])).stdout).toBe("Plan");
    const document = json((await run(["get", taskId, "-o", "json"])).stdout);
    expect(document).toMatchObject({ task_id: taskId, version: 1, content: HOSTILE, has_more: false });
    // The JSON document itself carries no raw control character (C1 and bidi escaped too).
    expect(inert((await run(["get", taskId, "-o", "json"])).stdout)).toBe(true);
  });

  it("replace and edit with a stale version exit 1 VERSION_MISMATCH and change nothing; usage errors exit 2", async () => {
    const taskId = await taskWithPlan();
    const replaced = await run(["replace", taskId, "-", "--expected-version", "1"], { input: "# New\n" });
    expect(replaced.stdout).toMatch(new RegExp(`^${taskId} version 2 6 bytes`));
    const stale = await run(["replace", taskId, "-", "--expected-version", "1"], { input: "# Lost\n" });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/reason: VERSION_MISMATCH\n/);
    const staleEdit = await run(["edit", taskId, "--old", "New", "--new", "Old", "--expected-version", "1"]);
    expect([staleEdit.code, staleEdit.stderr]).toEqual([1, expect.stringContaining("VERSION_MISMATCH")]);
    expect((await run(["get", taskId])).stdout).toBe("# New\n");

    for (const args of [
      ["replace", taskId, "-"], // --expected-version is required
      ["get"],
      ["no-such-command"],
      ["get", taskId, "--range", "9:2"],
      ["edit", taskId, "--old", "a", "--old-file", "f", "--new", "b", "--expected-version", "2"],
      ["append", taskId, join(cli.home, "missing.md")],
      ["history", taskId, "-o", "yaml"],
    ]) {
      const usage = await run(args);
      expect([args, usage.code]).toEqual([args, 2]);
    }
    expect((await run(["get", taskId])).stdout).toBe("# New\n");
  });

  it("replace --merge and edit --merge apply a stale write on top of the changes since; a conflict exits 1", async () => {
    const taskId = await taskWithPlan("# Plan\n- one\n- two\n- three\n");
    await run(["append", taskId], { input: "- four\n" }); // version 2, by someone else
    const merged = await run([
      "edit",
      taskId,
      "--old",
      "- one",
      "--new",
      "- 1",
      "--expected-version",
      "1",
      "--merge",
    ]);
    expect(merged.stdout).toMatch(
      new RegExp(
        `^${taskId} version 3 \\d+ bytes revision \\d+ merged with versions 2\\.\\.2 \\(edit re-applied\\)\\n$`,
      ),
    );
    expect((await run(["get", taskId])).stdout).toBe("# Plan\n- 1\n- two\n- three\n\n- four\n");
    const conflict = await run(["replace", taskId, "-", "--expected-version", "2", "--merge"], {
      input: "# Plan\n- uno\n- two\n- three\n\n- four\n",
    });
    expect([conflict.code, conflict.stderr]).toEqual([1, expect.stringContaining("reason: MERGE_CONFLICT")]);
    expect((await run(["get", taskId, "--version"])).stdout).toBe("3\n");
  });

  it("save, mark-started and delete-plan; a second delete exits 1 PLAN_NOT_FOUND", async () => {
    const taskId = randomId("cli");
    await run(["task", "create", taskId, "--workspace", "ws-1"]);
    const saved = await run(["save", taskId, "--title", "Saved"], { input: "# Saved\n" });
    expect(saved.stdout).toMatch(new RegExp(`^${taskId} version 1 8 bytes revision 1`));
    const started = await run(["mark-started", taskId, "--session", "s-1", "--actor", "bob", "-o", "json"]);
    expect(json(started.stdout)).toMatchObject({ task_id: taskId, implementation_started_by: "bob" });
    expect((await run(["delete-plan", taskId, "--expected-version", "1"])).stdout).toBe(
      `${taskId} plan deleted\n`,
    );
    const again = await run(["delete-plan", taskId]);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("reason: PLAN_NOT_FOUND")]);
  });

  it("history (table, -o json one per line, --all), show, diff (plain when piped), changes, restore, revert", async () => {
    const taskId = await taskWithPlan("# Plan\n- one\n");
    await run(["append", taskId, "--author", "bob"], { input: "- two\n" });
    const table = await run(["history", taskId]);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^#\s+author\s+kind\s+time\s+coalesced\s+revert-of\s+size\s+checklist\s*$/,
    );
    expect(table.stdout).toMatch(/\n2\s+bob\s+agent\s+\S+\s+\d+ B/);
    const lines = (await run(["history", taskId, "--all", "-o", "json"])).stdout.trim().split("\n").map(json);
    expect(lines.map((line) => line.number)).toEqual([2, 1]);
    expect(lines[0]).toMatchObject({
      author: { kind: "agent", name: "bob" },
      coalesced: false,
      revision_version: expect.any(String),
    });

    expect((await run(["show", taskId, "1"])).stdout).toBe("# Plan\n- one\n");
    const diff = await run(["diff", taskId, "1", "2"]);
    expect(diff.stdout).toBe("--- revision 1\n+++ revision 2\n@@ -1,2 +1,4 @@\n # Plan\n - one\n+\n+- two\n");
    expect(json((await run(["diff", taskId, "1", "2", "-o", "json"])).stdout)).toMatchObject({
      from: { number: 1 },
      to: { number: 2 },
      diff: { lines_added: 2, lines_removed: 0 },
    });
    const changes = await run(["changes", taskId, "--since", "1", "-o", "json"]);
    expect(json(changes.stdout)).toMatchObject({
      since_version: 1,
      plan: { version: 2 },
      changes: [{ version: 2, kind: "updated", author: { name: "bob" } }],
      diff: { lines_added: 2 },
    });
    expect((await run(["changes", taskId, "--since", "99"])).stderr).toContain("reason: HISTORY_UNAVAILABLE");

    const reverted = await run(["revert", taskId, "1"]);
    expect(reverted.stdout).toMatch(new RegExp(`^${taskId} version 3 \\d+ bytes revision 3`));
    expect((await run(["get", taskId])).stdout).toBe("# Plan\n- one\n");
    const second = lines[0] as { revision_version: string };
    const stale = await run([
      "restore",
      taskId,
      "2",
      "--expected-version",
      "2",
      "--expected-revision-version",
      second.revision_version,
    ]);
    expect([stale.code, stale.stderr]).toEqual([1, expect.stringContaining("VERSION_MISMATCH")]);
    const restored = await run([
      "restore",
      taskId,
      "2",
      "--expected-version",
      "3",
      "--expected-revision-version",
      second.revision_version,
    ]);
    expect(restored.stdout).toMatch(new RegExp(`^${taskId} version 4 \\d+ bytes revision 4`));
    expect((await run(["show", taskId, "9"])).stderr).toContain("reason: REVISION_NOT_FOUND");
  });

  it("an unreachable service exits 3 once the deadline ends the retries", async () => {
    const port = await freePort();
    const down = await run(["get", "t-1", "--target", `127.0.0.1:${port}`, "--timeout", "1500"]);
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/^error: (UNAVAILABLE|DEADLINE_EXCEEDED)\n/);
  });

  it("every command's --help fits one screen (24 lines of 80 columns; the program's list of commands 35) and exits 0", async () => {
    const commands = [[], ["context", "add"], ["context", "list"], ["task", "create"], ["task", "get"]];
    for (const name of [
      "get",
      "create-plan",
      "save",
      "append",
      "replace",
      "edit",
      "delete-plan",
      "mark-started",
    ])
      commands.push([name]);
    for (const name of ["history", "show", "diff", "changes", "restore", "revert", "watch", "completion"])
      commands.push([name]);
    for (const command of commands) {
      const help = await run([...command, "--help"]);
      const lines = help.stdout.trimEnd().split("\n");
      expect([
        command,
        help.code,
        lines.length <= (command.length === 0 ? 35 : 24),
        lines.every((line) => line.length <= 80),
      ]).toEqual([command, 0, true, true]);
    }
  });

  it("completion scripts: bash -n accepts the bash one; each names every command", async () => {
    for (const shell of ["bash", "zsh", "fish"]) {
      const script = await run(["completion", shell]);
      expect(script.code).toBe(0);
      for (const command of ["append", "watch", "history", "context", "expected-version"])
        expect(script.stdout).toContain(command);
    }
    const file = join(cli.home, "planctl.bash");
    writeFileSync(file, (await run(["completion", "bash"])).stdout);
    expect(spawnSync("bash", ["-n", file], { encoding: "utf8" })).toMatchObject({ status: 0, stderr: "" });
    // And it completes: the words after `planctl task ` are task's subcommands.
    const probe = `source ${file}; COMP_WORDS=(planctl task c); COMP_CWORD=2; _planctl; echo "\${COMPREPLY[*]}"`;
    expect(spawnSync("bash", ["-c", probe], { encoding: "utf8" }).stdout).toBe("create\n");
    expect((await run(["completion", "tcsh"])).code).toBe(2);
  });

  it("contexts: saved with mode 0600 under XDG_CONFIG_HOME; --context, --target and env override; no token printed", async () => {
    const env = { PLANCTL_TARGET: "" };
    const path = join(cli.configHome, "taskplans", "contexts.json");
    const marker = join(cli.home, "token-command-ran");
    const tokenFile = join(cli.home, "token");
    writeFileSync(tokenFile, "command-token-4242\n");
    const tokenCommand = `touch ${marker}; cat ${tokenFile}`;
    const outputs: string[] = [];
    const keep = async (args: string[], expected = 0) => {
      const result = await run(args, { env });
      outputs.push(result.stdout, result.stderr);
      expect([args, result.code]).toEqual([args, expected]);
      return result;
    };
    await keep([
      "context",
      "add",
      "local",
      "--target",
      `127.0.0.1:${app.port}`,
      "--token-command",
      tokenCommand,
    ]);
    await keep(["context", "add", "literal", "--target", "127.0.0.1:1", "--token", "literal-token-4242"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(cli.configHome, "taskplans")).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, "utf8")).not.toContain("command-token-4242"); // a command's token is never written

    const list = await keep(["context", "list", "-o", "json"]);
    expect(json(list.stdout).contexts).toEqual([
      expect.objectContaining({ name: "local", current: true, token: `command: ${tokenCommand}` }),
      expect.objectContaining({ name: "literal", current: false, token: "literal (hidden)" }),
    ]);
    const taskId = randomId("cli");
    await keep(["task", "create", taskId, "--workspace", "ws-1"]); // through the current context, "local"
    expect(statSync(marker).isFile()).toBe(true); // its token command ran
    await keep(["task", "get", taskId, "--context", "literal", "--timeout", "1000"], 3); // port 1
    await keep(["task", "get", taskId, "--context", "literal", "--target", `127.0.0.1:${app.port}`]);
    await keep(["context", "use", "literal"]);
    const viaEnv = await run(["task", "get", taskId, "-o", "json"], { env: { PLANCTL_CONTEXT: "local" } });
    expect(viaEnv.code).toBe(0);
    await keep(["context", "use", "nope"], 2);
    await keep(["task", "get", taskId, "--context", "nope"], 2);
    await keep(["context", "remove", "literal"]);
    await keep(["context", "list"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    for (const output of outputs) {
      expect(output).not.toContain("literal-token-4242");
      expect(output).not.toContain("command-token-4242");
    }
  });

  it("with auth on, the token from PLANCTL_TOKEN or a context's token command is sent and never printed", async () => {
    const secret = "planctl-secret-0123456789-0123456789";
    const guarded = await startTestApp("sqlite", { env: { PLAN_AUTH_JWT_SECRET: secret } });
    try {
      const jwt = await new SignJWT({ kind: "user", name: "dana", workspaces: ["ws-cli"] })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("dana")
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(new TextEncoder().encode(secret));
      const dir = mkdtempSync(join(work, "auth-"));
      const env = { PLANCTL_TARGET: `127.0.0.1:${guarded.port}`, XDG_CONFIG_HOME: dir };
      const taskId = randomId("cli");
      const anonymous = await run(["task", "create", taskId, "--workspace", "ws-cli"], { env });
      expect([anonymous.code, anonymous.stderr]).toEqual([
        1,
        expect.stringMatching(/^error: UNAUTHENTICATED\n/),
      ]);
      const outputs: string[] = [];
      const viaEnv = await run(["task", "create", taskId, "--workspace", "ws-cli"], {
        env: { ...env, PLANCTL_TOKEN: jwt },
      });
      expect(viaEnv.code).toBe(0);
      writeFileSync(join(dir, "jwt"), `${jwt}\n`);
      await run(
        [
          "context",
          "add",
          "idp",
          "--target",
          env.PLANCTL_TARGET,
          "--token-command",
          `cat ${join(dir, "jwt")}`,
        ],
        {
          env,
        },
      );
      const viaCommand = await run(["create-plan", taskId, "--context", "idp"], {
        env,
        input: "# by dana\n",
      });
      expect([viaCommand.code, viaCommand.stderr]).toEqual([0, ""]);
      const history = await run(["history", taskId, "--context", "idp", "-o", "json"], { env });
      outputs.push(viaEnv.stdout, viaEnv.stderr, viaCommand.stdout, viaCommand.stderr, history.stdout);
      outputs.push((await run(["context", "list", "-o", "json"], { env })).stdout);
      expect(readFileSync(join(dir, "taskplans", "contexts.json"), "utf8")).not.toContain(jwt);
      for (const output of outputs) expect(output).not.toContain(jwt.split(".")[2]);
      expect(json(history.stdout)).toMatchObject({ author: { name: "dana" } });
    } finally {
      await guarded.stop();
    }
  });

  it("a context with --ca, --cert, --key and --server-name reaches an mTLS service; without the client certificate it exits 3", async () => {
    const dir = mkdtempSync(join(work, "pki-"));
    const ca = makeCa(dir, "ca");
    const served = ca.issue("server", { names: ["plans.internal"] });
    const member = ca.issue("client-1");
    const secure = await startTestApp("sqlite", {
      env: {
        PLAN_GRPC_TLS_CERT_FILE: served.certFile,
        PLAN_GRPC_TLS_KEY_FILE: served.keyFile,
        PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
      },
    });
    try {
      const target = `127.0.0.1:${secure.port}`;
      const env = { PLANCTL_TARGET: "", XDG_CONFIG_HOME: dir }; // contexts of its own: the others stay plaintext
      const tls = ["--target", target, "--ca", ca.certFile, "--server-name", "plans.internal"];
      const mtls = [...tls, "--cert", member.certFile, "--key", member.keyFile];
      expect((await run(["context", "add", "mtls", ...mtls], { env })).code).toBe(0);
      expect((await run(["context", "add", "tls-only", ...tls], { env })).code).toBe(0);
      expect((await run(["context", "add", "half", ...tls, "--cert", member.certFile], { env })).code).toBe(
        2,
      );
      const taskId = randomId("cli");
      const created = await run(["task", "create", taskId, "--workspace", "ws-1", "--context", "mtls"], {
        env,
      });
      expect([created.code, created.stderr]).toEqual([0, ""]);
      const refused = await run(["task", "get", taskId, "--context", "tls-only", "--timeout", "2000"], {
        env,
      });
      expect(refused.code).toBe(3);
      const list = await run(["context", "list"], { env });
      expect(list.stdout).toMatch(/mtls\s+127\.0\.0\.1:\d+\s+mtls/);
    } finally {
      await secure.stop();
    }
  });

  it("on a terminal, agent text is made inert: get, show, history, diff, errors; colours only from planctl", async () => {
    const taskId = await taskWithPlan(HOSTILE);
    await run(["append", taskId, "--author", "evil\u001b]0;pwned\u0007\u001b[2J"], {
      input: "- \u001b[1mmore\u009b\n",
    });
    for (const args of [
      ["get", taskId],
      ["show", taskId, "1"],
      ["history", taskId],
      ["diff", taskId, "1", "2"],
      ["changes", taskId, "--since", "1"],
      ["edit", taskId, "--old", "\u001b[31mred", "--new", "x", "--expected-version", "1"],
    ]) {
      const screen = await cli.runOnTerminal(args);
      expect([args, inert(screen.stdout)]).toEqual([args, true]);
      expect(screen.stdout).not.toContain("pwned\u0007");
    }
    const history = await cli.runOnTerminal(["history", taskId]);
    expect(history.stdout).toContain("evil");
    const coloured = await cli.runOnTerminal(["diff", taskId, "1", "2"]);
    expect(coloured.stdout).toContain("\u001b[32m+"); // green additions on a terminal
    const plain = await cli.runOnTerminal(["diff", taskId, "1", "2"], { env: { NO_COLOR: "1" } });
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("watch -o json prints one JSON document per line per change; SIGTERM ends it with exit 0; WATCH_HISTORY_EXPIRED exits 1 saying what to do", async () => {
    const taskId = await taskWithPlan();
    const watcher = spawn(cli.bin, ["watch", taskId, "--after", "1", "-o", "json"], {
      env: { ...cli.env, PATH: process.env.PATH },
    });
    let printed = "";
    watcher.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    try {
      for (const line of ["- two\n", "- three\n"]) await run(["append", taskId], { input: line });
      await waitFor("two changes", async () => printed.split("\n").length >= 3, 20_000);
      const changes = printed.trim().split("\n").map(json);
      expect(changes.map((change) => [change.kind, change.version])).toEqual([
        ["updated", 2],
        ["updated", 3],
      ]);
    } finally {
      await stopProcess(watcher);
    }
    expect(watcher.exitCode).toBe(0); // Ctrl-C or SIGTERM ends a watch quietly
    const ahead = await run(["watch", taskId, "--after", "99"]);
    expect([ahead.code, ahead.stdout]).toEqual([1, ""]);
    expect(ahead.stderr).toMatch(
      /^watch ended: .+read the plan again.+\n(.|\n)*reason: WATCH_HISTORY_EXPIRED\n/,
    );
  });

  it("in tmux, `planctl watch` prints one line per change another process makes, like tail -f, until Ctrl-C", async () => {
    requireBinary("tmux", "tmux");
    const taskId = await taskWithPlan();
    const socket = join(work, "tmux.sock"); // a tmux server of this test's own
    const tmux = (...args: string[]) => spawnSync("tmux", ["-S", socket, ...args], { encoding: "utf8" });
    const env = Object.entries(cli.env).map(([name, value]) => `${name}=${value}`);
    const started = tmux(
      "new-session",
      "-d",
      "-s",
      "watch",
      "-x",
      "160",
      "-y",
      "20",
      "env",
      ...env,
      cli.bin,
      "watch",
      taskId,
    );
    expect(started.status).toBe(0);
    const screen = () => tmux("capture-pane", "-p", "-t", "watch").stdout;
    try {
      await waitFor("the snapshot line", async () => /version 1 snapshot/.test(screen()), 20_000);
      await run(["append", taskId, "--author", "bob"], { input: "- two\n" });
      await run(["append", taskId, "--author", "carol"], { input: "- three\n" });
      await waitFor("two more lines", async () => /version 3 updated/.test(screen()), 20_000);
      const lines = screen()
        .split("\n")
        .filter((line) => line.trim() !== "");
      expect(lines).toEqual([
        expect.stringMatching(/^\S+ version 1 snapshot \d+ bytes$/),
        expect.stringMatching(/^\S+Z version 2 updated by agent:bob revision \d+ \d+ bytes$/),
        expect.stringMatching(/^\S+Z version 3 updated by agent:carol revision \d+ \d+ bytes$/),
      ]);
      tmux("send-keys", "-t", "watch", "C-c");
      await waitFor("the watch to end", async () => tmux("has-session", "-t", "watch").status !== 0, 10_000);
    } finally {
      tmux("kill-server");
    }
  });

  it("watch resumes across a replica restart: every change printed once, in order", async () => {
    const dir = mkdtempSync(join(work, "replica-"));
    const replica = await startReplica({ PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}` }, dir);
    const env = { PLANCTL_TARGET: `127.0.0.1:${replica.port}` };
    try {
      const taskId = randomId("cli");
      await run(["task", "create", taskId, "--workspace", "ws-1"], { env });
      await run(["create-plan", taskId], { env, input: "# Plan\n" });
      const watcher = spawn(cli.bin, ["watch", taskId, "--after", "1", "-o", "json"], {
        env: { ...cli.env, ...env, PATH: process.env.PATH },
      });
      let printed = "";
      watcher.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
      const versions = () =>
        printed
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((line) => json(line).version);
      let errors = "";
      watcher.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
      try {
        await run(["append", taskId], { env, input: "- two\n" });
        await waitFor("version 2", async () => versions().includes(2), 20_000);
        await replica.stop(); // drains: the open watch ends UNAVAILABLE, and the client reopens it
        await replica.restart();
        await run(["append", taskId], { env, input: "- three\n" });
        await waitFor("version 3", async () => versions().includes(3), 30_000).catch((error: Error) => {
          throw new Error(`${error.message}; watch exit ${watcher.exitCode}, stderr: ${errors}`);
        });
        expect(versions()).toEqual([2, 3]);
        expect(watcher.exitCode).toBeNull(); // still watching
      } finally {
        await stopProcess(watcher);
      }
    } finally {
      await replica.stop();
    }
  });
});
