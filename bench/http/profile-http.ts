/**
 * Benchmark (not a test): where the replica's CPU goes for one kind of call over one door. One
 * replica on MariaDB (durable); 1,000 tasks are seeded, then calls (GetPlan or a 100-byte append, 16
 * in flight) arrive over gRPC (the client package) or Connect JSON over HTTP/1.1 (the harness's
 * connect-node client): a warm-up of PROFILE_CALLS / 5, then PROFILE_CALLS measured. Printed: the
 * replica's user and system CPU, system calls and CPU by thread per measured call; then, with
 * `--cpu-prof` (the default), the whole run's samples by package and by function in µs per call
 * (wall time of the main thread: a thread waiting for a core counts), or with PROFILE_PERF a Linux
 * perf file of the measured phase.
 *
 *   PROFILE_DOOR=connect PROFILE_CALL=read npm run bench:http-profile
 *   PROFILE_DOOR=grpc PROFILE_CALL=append PROFILE_CALLS=20000 npm run bench:http-profile
 *   PROFILE_CPU_PROF=0 PROFILE_DOOR=connect npm run bench:http-profile   # figures only, no profiler
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WriteMode } from "@taskplans/contract";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startReplica } from "../../test/harness/servers/replica";
import { type Clients, connect } from "../../test/harness/calls/rpc";
import { connectOverHttp } from "../../test/harness/calls/connect-clients";
import { systemCalls, threadCpuMs } from "../shared/process-stats";

const DOOR = process.env.PROFILE_DOOR ?? "connect";
const CALL = process.env.PROFILE_CALL ?? "read";
const CALLS = Number(process.env.PROFILE_CALLS ?? 10_000);
const TOP = Number(process.env.PROFILE_TOP ?? 40);
const TASKS = 1000;
// PROFILE_PERF=<file>: sample the measured phase with Linux perf (CPU time, kernel included) instead
// of --cpu-prof (whose samples count wall time); read with `perf report -i <file> --no-children --sort sym`.
const PERF = process.env.PROFILE_PERF;
// PROFILE_CPU_PROF=0: no profiler at all, only the CPU and system-call figures of the measured phase.
const CPU_PROF = !PERF && process.env.PROFILE_CPU_PROF !== "0";
const IN_FLIGHT = 16;

interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** User and system CPU ms of a process so far (/proc, 10 ms resolution). */
function cpuTimes(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

async function pool(count: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

function packageOf(url: string, name: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] ?? "node_modules";
  return /\/dist\/((?:src|generated)\/[^/]+)/.exec(url)?.[1] ?? "other";
}

function print(profile: CpuProfile, calls: number): void {
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const frameOf = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = frameOf.get(id);
    if (!frame || frame.functionName === "(idle)") return;
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    const file = frame.url.replace(/^.*\/(dist|node_modules)\//, "");
    const fn = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const pkg = packageOf(frame.url, frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  });
  const rows = (map: Map<string, number>, top: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => `${(us / calls).toFixed(1).padStart(8)} us  ${name}`)
      .join("\n");
  console.log(`${DOOR} ${CALL}: ${(total / calls).toFixed(1)} us of samples per call (idle left out)`);
  console.log(`by package:\n${rows(byPackage, 25)}\n\nby function:\n${rows(byFunction, TOP)}`);
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-profile-http-"));
  const profileDir = join(logDir, "profile");
  const mariadb = await startMariaDb({ durable: true });
  const clients: Clients[] = [];
  try {
    await createDatabase(mariadb.port, "profile_http");
    const replica = await startReplica(
      { PLAN_DATABASE_URL: mariadb.urlFor("profile_http"), PLAN_COALESCE_WINDOW_MS: "300000" },
      logDir,
      null,
      {
        nodeArgs: [
          ...(PERF ? ["--perf-basic-prof"] : CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
          ...(process.env.PROFILE_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
        ],
        logLevel: process.env.PROFILE_LOG_LEVEL ?? "warn",
      },
    );
    const grpc = connect(replica.port);
    const client = DOOR === "grpc" ? grpc : connectOverHttp(replica.httpPort);
    clients.push(grpc, client);
    const tasks = Array.from({ length: TASKS }, (_, i) => `profile-http-${i}`);
    await pool(TASKS, async (i) => {
      await grpc.tasks.createTask({ taskId: tasks[i] as string, workspaceId: "ws" });
      await grpc.plans.createPlan({ taskId: tasks[i] as string, content: "# Plan" });
    });
    const work = (i: number) =>
      CALL === "append"
        ? client.plans.updatePlan({
            taskId: tasks[i % TASKS] as string,
            content: `- step ${i}: ${"x".repeat(80)}`,
            mode: WriteMode.WRITE_MODE_APPEND,
          })
        : client.plans.getPlan({ taskId: tasks[i % TASKS] as string });
    await pool(CALLS / 5, work); // warm-up
    const before = {
      cpu: cpuTimes(replica.pid),
      io: systemCalls(replica.pid),
      threads: threadCpuMs(replica.pid),
    };
    const perf = PERF
      ? spawn("perf", ["record", "-F", "1999", "-g", "-p", String(replica.pid), "-o", PERF], {
          stdio: "ignore",
        })
      : null;
    await pool(CALLS, work);
    if (perf) {
      const exited = new Promise((resolve) => perf.once("exit", resolve));
      perf.kill("SIGINT");
      await exited;
    }
    const after = {
      cpu: cpuTimes(replica.pid),
      io: systemCalls(replica.pid),
      threads: threadCpuMs(replica.pid),
    };
    const per = (a: number, b: number) => ((a - b) / CALLS).toFixed(3);
    console.log(
      `measured ${CALLS} calls: user ${per(after.cpu.user, before.cpu.user)} ms, system ${per(after.cpu.system, before.cpu.system)} ms per call; ` +
        `${per(after.io.writes, before.io.writes)} write and ${per(after.io.reads, before.io.reads)} read system calls per call`,
    );
    const threads = [...after.threads].map(
      ([name, ms]) => `${name} ${per(ms, before.threads.get(name) ?? 0)}`,
    );
    console.log(`CPU ms per call by thread: ${threads.join(", ")}`);
    for (const c of clients) c.close();
    clients.length = 0;
    await replica.stop();
    if (process.env.PROFILE_KEEP_LOG) copyFileSync(replica.logFile, process.env.PROFILE_KEEP_LOG);
    if (!CPU_PROF) return;
    const file = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"));
    if (!file) throw new Error("the replica wrote no profile");
    print(JSON.parse(readFileSync(join(profileDir, file), "utf8")) as CpuProfile, CALLS * 1.2 + 2 * TASKS);
  } finally {
    for (const c of clients) c.close();
    await mariadb.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
