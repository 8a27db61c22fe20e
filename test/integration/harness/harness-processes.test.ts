import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startReplica } from "../../harness/servers/replica";
import { stopSurvivors, tracked } from "../../harness/servers/started-processes";

// The harness stops exactly what it started, also when a start fails, and the run ends by checking
// that nothing it started survives (global teardown runs stopSurvivors over the run's record).
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("processes the harness starts", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "taskplans-harness-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a replica that never serves is stopped by startReplica before it throws", async () => {
    // The preload blocks the server before it listens: the process runs but never answers health.
    const preload = join(dir, "never-serve.js");
    writeFileSync(preload, "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);\n");
    let pid = -1;
    const before = new Set(await childPids());
    await expect(
      startReplica(
        { NODE_OPTIONS: `--require ${preload}`, PLAN_DATABASE_URL: `sqlite:${join(dir, "p.sqlite")}` },
        dir,
        null,
        {
          servingWithinMs: 1_500,
        },
      ),
    ).rejects.toThrow(/not ready within 1500 ms/);
    for (const child of await childPids()) if (!before.has(child)) pid = child;
    // No child of this process was left behind.
    expect(pid).toBe(-1);
  });

  it("stopSurvivors stops and names a recorded process that still runs, by PID and start time", async () => {
    const previous = process.env.TASKPLANS_STARTED_PROCESSES_DIR;
    process.env.TASKPLANS_STARTED_PROCESSES_DIR = dir;
    try {
      const left = tracked(spawn("sleep", ["60"], { stdio: "ignore" }), "a forgotten sleep");
      const done = tracked(spawn("true", [], { stdio: "ignore" }), "a finished command");
      await new Promise((resolve) => done.once("exit", resolve));
      // A record whose PID now belongs to another process (this one) is never touched.
      writeFileSync(join(dir, String(process.pid)), JSON.stringify({ what: "reused pid", startTime: "1" }));
      const exited = new Promise((resolve) => left.once("exit", resolve));
      expect(stopSurvivors(dir)).toEqual([`a forgotten sleep (pid ${left.pid})`]);
      await exited;
      expect(alive(left.pid ?? -1)).toBe(false);
      expect(alive(process.pid)).toBe(true);
    } finally {
      if (previous === undefined) delete process.env.TASKPLANS_STARTED_PROCESSES_DIR;
      else process.env.TASKPLANS_STARTED_PROCESSES_DIR = previous;
    }
  });
});

// PIDs of this process's live children (from /proc: its tasks' children lists).
async function childPids(): Promise<number[]> {
  const { readdirSync, readFileSync } = await import("node:fs");
  const pids: number[] = [];
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const children = readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8").trim();
    if (children) pids.push(...children.split(" ").map(Number));
  }
  return pids.filter((pid) => {
    try {
      return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
    } catch {
      return false;
    }
  });
}
