import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cachedTool } from "../../harness/kube/helm";
import { createDatabase, type MariaDb, startMariaDb } from "../../harness/databases/mariadb";
import { createPodNetwork, type Pod, type PodNetwork } from "../../harness/network/pod-network";
import { runToExit, waitFor } from "../../harness/servers/processes";

// The README's commands, run exactly as written: `npm start` (the embedded default on its default
// address, 127.0.0.1:50051) and `npm run migrate`. Each runs in a copy of the source tree, so its
// build does not rewrite the dist/ other suites use, and in its own network namespace, so the
// default port is free whatever else this machine runs.
const ROOT = join(__dirname, "..", "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

let network: PodNetwork;
let mariadb: MariaDb;
let checkout: string;

beforeAll(async () => {
  network = createPodNetwork();
  mariadb = await startMariaDb({ alsoListenOn: network.hostAddress });
  checkout = mkdtempSync(join(tmpdir(), "taskplans-checkout-"));
  for (const entry of [
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "tsconfig.build.json",
    // npm run build also bundles the console page (scripts/build-console.mjs, its own tsconfig).
    "tsconfig.console.json",
    "scripts",
    "src",
    // The workspaces the build compiles first (tsc -b tls generated).
    "tls",
    "generated",
    "proto",
    "clients",
    "mcp",
  ]) {
    cpSync(join(ROOT, entry), join(checkout, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(checkout, "node_modules"));
}, 120_000);

afterAll(async () => {
  await mariadb?.stop();
  network?.close();
  rmSync(checkout, { recursive: true, force: true });
});

const inPod = (pod: Pod, argv: string[]) => [...pod.exec, ...argv];

/** Runs the product's health check inside the pod (where 127.0.0.1 is the pod's loopback). */
const healthInPod = (pod: Pod, target: string) =>
  runToExit(inPod(pod, ["node", join(ROOT, "dist", "src", "bin", "healthcheck.js"), target]), {
    timeoutMs: 20_000,
  });

describe("the README's commands, exactly as written", () => {
  it("shows both newcomer commands near the top", () => {
    const top = README.slice(0, README.indexOf("## "));
    expect(top).toContain("npm ci && npm start");
    expect(top).toMatch(/^npm test /m);
    expect(top).toMatch(/^npm run test:kube /m);
  });

  it("CI runs the test commands the README gives, in its order (the cluster after every other test)", () => {
    const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
    const commands = ci.split("\n").filter((line) => /^npm /.test(line));
    expect(commands).toEqual(["npm test", "npm run test:galera", "npm run test:kube"]);
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts["test:kube"]).toBe("bash scripts/kube/test.sh");
  });

  it("`npm start` builds and serves the embedded default on 127.0.0.1:50051, and stops on SIGTERM", async () => {
    const pod = network.addPod();
    const log = join(checkout, "npm-start.log");
    // Its own process group, so the SIGTERM reaches npm, its shell and node (all started here).
    const child: ChildProcess = spawn(pod.exec[0] ?? "ip", [...pod.exec.slice(1), "npm", "start"], {
      cwd: checkout,
      env: { ...process.env, PLAN_LOG_LEVEL: "info" },
      stdio: ["ignore", openSync(log, "a"), openSync(log, "a")],
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await waitFor(
        "npm start",
        async () => {
          if (child.exitCode !== null) throw new Error(`npm start exited: ${readFileSync(log, "utf8")}`);
          return (await healthInPod(pod, "127.0.0.1:50051")).code === 0;
        },
        120_000,
      );
      const probe = await healthInPod(pod, "127.0.0.1:50051");
      expect(probe.stdout).toMatch(
        /^ok: 127\.0\.0\.1:50051: taskplans\.v1\.PlanService SERVING; a plan read answered NOT_FOUND/,
      );
      expect(existsSync(join(checkout, "var", "plans.sqlite"))).toBe(true); // the embedded database file
      expect(readFileSync(log, "utf8")).toContain('"database":"sqlite","lock":"in-process"');
    } finally {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
    }
    await exited;
    // npm exits at once; node drains, logs "stopped" and exits: wait until the group is gone.
    const groupGone = async () => {
      try {
        process.kill(-(child.pid ?? 0), 0);
        return false;
      } catch {
        return true;
      }
    };
    await waitFor("npm start's processes to exit", groupGone, 15_000);
    expect(readFileSync(log, "utf8")).toContain('"msg":"stopped"');
  });

  it("the one-minute tour's grpcurl commands run as written against the embedded default, the watch seeing the append", async () => {
    const tour = README.slice(
      README.indexOf("## A one-minute tour"),
      README.indexOf("## The API in ten lines"),
    );
    const commands = [...tour.matchAll(/```bash\n([\s\S]*?)```/g)]
      .flatMap(([, block]) => (block ?? "").replace(/\\\n\s*/g, "").split("\n"))
      .filter((line) => line.startsWith("grpcurl "));
    expect(commands.length).toBeGreaterThanOrEqual(8);
    const pod = network.addPod();
    const dir = mkdtempSync(join(tmpdir(), "taskplans-tour-"));
    // npm start's entry point, on its default address inside the pod.
    const server = spawn(
      pod.exec[0] ?? "ip",
      [...pod.exec.slice(1), "node", join(ROOT, "dist", "src", "bin", "main.js")],
      {
        cwd: dir,
        env: { ...process.env, PLAN_LOG_LEVEL: "warn" },
        stdio: "ignore",
      },
    );
    const env = { ...process.env, PATH: `${dirname(cachedTool("grpcurl"))}:${process.env.PATH ?? ""}` };
    const inShell = (command: string) =>
      runToExit(inPod(pod, ["sh", "-c", command]), { env, timeoutMs: 20_000 });
    let watch: ChildProcess | undefined;
    try {
      await waitFor("the server", async () => (await healthInPod(pod, "127.0.0.1:50051")).code === 0, 60_000);
      let watched = "";
      for (const command of commands) {
        if (command.includes("/WatchPlan")) {
          watch = spawn(pod.exec[0] ?? "ip", [...pod.exec.slice(1), "sh", "-c", `exec ${command}`], { env });
          watch.stdout?.on("data", (chunk: Buffer) => (watched += chunk.toString()));
          await waitFor(
            "the watch's snapshot",
            async () => watched.includes("PLAN_CHANGE_KIND_SNAPSHOT"),
            20_000,
          );
          continue;
        }
        const result = await inShell(command);
        expect([command, result.code, result.stderr]).toEqual([command, 0, ""]);
        if (command.includes("/GetPlan"))
          expect(JSON.parse(result.stdout).plan.content).toBe(
            "# Plan\n- step one\n\n## Findings\n- it works\n",
          );
        if (command.includes("/ListPlanRevisions"))
          expect(JSON.parse(result.stdout).revisions).toHaveLength(1);
      }
      await waitFor("the watch's update", async () => watched.includes("PLAN_CHANGE_KIND_UPDATED"), 20_000);
      // The README's error example: the CreatePlan again.
      const again = await inShell(commands.find((command) => command.includes("/CreatePlan")) ?? "");
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('"reason": "PLAN_EXISTS"');
    } finally {
      watch?.kill("SIGTERM");
      if (server.pid) process.kill(server.pid, "SIGTERM");
      await new Promise((resolve) =>
        server.exitCode === null ? server.once("exit", resolve) : resolve(null),
      );
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("`npm run migrate` migrates the database PLAN_DATABASE_URL names, then exits 0", async () => {
    const database = `readme_${Date.now()}`;
    await createDatabase(mariadb.port, database);
    const result = await runToExit(["npm", "run", "migrate"], {
      cwd: checkout,
      env: { ...process.env, PLAN_DATABASE_URL: `mysql://root@127.0.0.1:${mariadb.port}/${database}` },
      timeoutMs: 120_000,
    });
    expect([result.code, result.stderr]).toEqual([0, expect.not.stringContaining("failed")]);
    expect(result.stdout).toContain(
      "migrations applied: InitialSchema1764400000000, WriteRequests1764500000000, AppendComposition1764600000000",
    );
  });
});
