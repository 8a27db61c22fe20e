/**
 * Benchmark (not a test): where the CPU of an append goes, in the service and in the ceiling of
 * `npm run bench:overhead` (the same statements behind a bare grpc-js server), under the same load:
 * MariaDB with durable commits, 3 Redis nodes, 1,000 seeded tasks, 100-byte appends at 16 in flight
 * through the client package. Each process runs with `--cpu-prof`; the profile's samples are summed
 * by what ran (the service's own files by directory, each dependency by package, Node's internals,
 * GC) and printed as microseconds per append, side by side, with the CPU each process used.
 *
 * Beside the samples it prints, per append of the measured phase, the write and read system calls
 * of each process (`/proc/<pid>/io`) and the statements MariaDB received (its `Questions` counter).
 * With PROFILE_ROUNDS=n the two alternate n times (the first to run changes each round) and the
 * CPU ratio of each round is printed with their median.
 *
 *   npm run bench:profile
 *   PROFILE_APPENDS=20000 PROFILE_REDIS=0 PROFILE_ROUNDS=3 PROFILE_KEEP=/tmp/profiles npm run bench:profile
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { WriteMode } from "@taskplans/client";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startRedisNodes } from "../../test/harness/databases/redis";
import { startReplica } from "../../test/harness/servers/replica";
import { connect } from "../../test/harness/calls/rpc";
import { createConnection } from "mysql2/promise";
import { processCpuMs, systemCalls, threadCpuMs } from "../shared/process-stats";

const TASKS = 1_000;
const IN_FLIGHT = 16;
const APPENDS = Number(process.env.PROFILE_APPENDS ?? 10_000);
const WITH_REDIS = process.env.PROFILE_REDIS !== "0";
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 1);
// PROFILE_PERF=<dir>: sample with Linux perf (CPU time, kernel included, the measured phase only)
// instead of --cpu-prof, whose samples count wall time (a thread waiting for a core is charged to
// what it last ran). Read with `perf report -i <dir>/<process>.data --no-children --sort dso,sym`.
const PERF_DIR = process.env.PROFILE_PERF;

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** What a sample's frame belongs to: a directory of src/, a package, Node's internals, or V8. */
function bucketOf(frame: ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] ?? "node_modules";
  const own = /\/dist(?:-bench)?\/((?:src|generated|clients|bench)\/(?:[^/]+\/)?)/.exec(url);
  return own ? (own[1] ?? "own") : "other";
}

/** Microseconds of samples per bucket (idle left out), and per function of the service's own code. */
function summarize(profile: CpuProfile): { buckets: Map<string, number>; functions: Map<string, number> } {
  const bucket = new Map<number, string>();
  const fn = new Map<number, string>();
  for (const node of profile.nodes) {
    bucket.set(node.id, bucketOf(node.callFrame));
    const file = node.callFrame.url.replace(/^.*\/(dist(?:-bench)?|node_modules)\//, "");
    fn.set(node.id, `${node.callFrame.functionName || "(anonymous)"} ${file}`);
  }
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const name = bucket.get(id) ?? "other";
    if (name === "(idle)") return;
    const us = profile.timeDeltas[i] ?? 0;
    buckets.set(name, (buckets.get(name) ?? 0) + us);
    const key = fn.get(id) ?? "?";
    functions.set(key, (functions.get(key) ?? 0) + us);
  });
  return { buckets, functions };
}

// PROFILE_KEEP=<dir> keeps the raw profiles there (for Chrome DevTools or any .cpuprofile viewer).
function readProfile(dir: string): CpuProfile {
  const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no profile written in ${dir}`);
  const keep = process.env.PROFILE_KEEP;
  if (keep) {
    mkdirSync(keep, { recursive: true });
    copyFileSync(join(dir, file), join(keep, `${basename(dir)}.cpuprofile`));
  }
  return JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
}

/** `perf record` of a process's threads until stopped (SIGINT, after which perf writes its file). */
function perfRecord(pid: number, dir: string): { stop(): Promise<void> } {
  mkdirSync(dirname(dir), { recursive: true });
  const perf = spawn("perf", ["record", "-F", "997", "-g", "-p", String(pid), "-o", `${dir}.data`], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  return {
    stop: async () => {
      const exited = new Promise((resolve) => perf.once("exit", resolve));
      perf.kill("SIGINT");
      await exited;
    },
  };
}

async function appendLoad(port: number, tasks: readonly string[], appends: number): Promise<void> {
  const clients = Array.from({ length: 4 }, () => connect(port));
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < appends) {
        const i = next++;
        await clients[i % clients.length]?.plans.updatePlan({
          taskId: tasks[i % tasks.length],
          content: `- append ${i} `.padEnd(100, "x"),
          mode: WriteMode.WRITE_MODE_APPEND,
        });
      }
    }),
  );
  for (const client of clients) client.close();
}

interface Measured {
  readonly cpuMsPerAppend: number;
  /** CPU ms per append of the measured phase, by thread name (threadCpuMs). */
  readonly threads: Map<string, number>;
  /** Per append of the measured phase: the process's system calls, and statements MariaDB received. */
  readonly writeCalls: number;
  readonly readCalls: number;
  readonly statements: number;
  readonly buckets: Map<string, number>;
  readonly functions: Map<string, number>;
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), "taskplans-profile-"));
  const mariadb = await startMariaDb({ durable: true });
  const nodes = WITH_REDIS ? await startRedisNodes(3) : [];
  const redisUrls = nodes.map((n) => n.url);
  const env: Record<string, string> = {
    PLAN_REVISION_CONTENT_AT_HEAD: "true",
    ...(WITH_REDIS ? { PLAN_REDIS_URLS: redisUrls.join(",") } : {}),
  };
  const tasks = Array.from({ length: TASKS }, (_, i) => `task-${i}`);
  let databases = 0;
  // A fresh database with the tasks seeded by a replica that is not profiled.
  const seeded = async (): Promise<string> => {
    const name = `p_${databases++}`;
    await createDatabase(mariadb.port, name);
    const databaseUrl = mariadb.urlFor(name);
    const seeder = await startReplica({ ...env, PLAN_DATABASE_URL: databaseUrl }, logDir);
    const client = connect(seeder.port);
    for (const taskId of tasks) {
      await client.tasks.createTask({ taskId, workspaceId: "bench" });
      await client.plans.createPlan({ taskId, content: "# Plan\n".padEnd(200, "x") });
    }
    client.close();
    await seeder.stop();
    return databaseUrl;
  };
  const profiled = (name: string) => {
    const dir = join(logDir, name);
    if (PERF_DIR) return { dir: join(PERF_DIR, name), nodeArgs: ["--perf-basic-prof"] };
    return { dir, nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`] };
  };
  // Warmed up as bench:overhead warms the ceiling (two appends per task), then measured.
  const questions = async (): Promise<number> => {
    const connection = await createConnection(mariadb.urlFor("mysql"));
    const [rows] = await connection.query("SHOW GLOBAL STATUS LIKE 'Questions'");
    await connection.end();
    return Number((rows as { Value: string }[])[0]?.Value ?? 0);
  };
  const measure = async (port: number, pid: number, stop: () => Promise<void>, dir: string) => {
    await appendLoad(port, tasks, 2 * TASKS);
    const before = {
      cpu: processCpuMs(pid),
      threads: threadCpuMs(pid),
      calls: systemCalls(pid),
      statements: await questions(),
    };
    const perf = PERF_DIR ? perfRecord(pid, dir) : null;
    await appendLoad(port, tasks, APPENDS);
    await perf?.stop();
    const cpuMs = processCpuMs(pid) - before.cpu;
    const threads = new Map(
      [...threadCpuMs(pid)].map(([name, ms]) => [name, (ms - (before.threads.get(name) ?? 0)) / APPENDS]),
    );
    const calls = systemCalls(pid);
    // Less the count's own statement (each count includes itself).
    const statements = (await questions()) - before.statements - 1;
    await stop();
    return {
      cpuMsPerAppend: cpuMs / APPENDS,
      threads,
      writeCalls: (calls.writes - before.calls.writes) / APPENDS,
      readCalls: (calls.reads - before.calls.reads) / APPENDS,
      statements: statements / APPENDS,
      ...(PERF_DIR ? { buckets: new Map(), functions: new Map() } : summarize(readProfile(dir))),
    };
  };
  const service = async (round: number): Promise<Measured> => {
    const { dir, nodeArgs } = profiled(`service-${round}`);
    const databaseUrl = await seeded();
    const replica = await startReplica({ ...env, PLAN_DATABASE_URL: databaseUrl }, logDir, null, {
      nodeArgs,
    });
    return measure(replica.port, replica.pid, () => replica.stop(), dir);
  };
  const ceiling = async (round: number): Promise<Measured> => {
    const { dir, nodeArgs } = profiled(`ceiling-${round}`);
    const databaseUrl = await seeded();
    const child = spawn(
      process.execPath,
      [
        ...nodeArgs,
        join(__dirname, "..", "overhead", "overhead-ceiling.js"),
        JSON.stringify({ databaseUrl, redisUrls }),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      child.once("exit", (code) => reject(new Error(`ceiling server exited ${code}`)));
    });
    const stop = async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    };
    return measure(port, child.pid ?? -1, stop, dir);
  };
  const rounds: { service: Measured; ceiling: Measured }[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        const s = await service(round);
        rounds.push({ service: s, ceiling: await ceiling(round) });
      } else {
        const c = await ceiling(round);
        rounds.push({ service: await service(round), ceiling: c });
      }
    }
  } finally {
    for (const node of nodes) await node.stop();
    await mariadb.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
  const last = rounds[rounds.length - 1];
  if (last && !PERF_DIR) print(last.service, last.ceiling);
  if (last && PERF_DIR)
    console.log(
      `perf data in ${PERF_DIR}; CPU per append ${last.service.cpuMsPerAppend.toFixed(3)} / ${last.ceiling.cpuMsPerAppend.toFixed(3)} ms`,
    );
  if (rounds.length > 1) {
    const ratios = rounds.map((r) => r.service.cpuMsPerAppend / r.ceiling.cpuMsPerAppend);
    const each = rounds.map(
      (r, i) =>
        `${r.service.cpuMsPerAppend.toFixed(3)} / ${r.ceiling.cpuMsPerAppend.toFixed(3)} ms (${ratios[i]?.toFixed(2)}x)`,
    );
    console.log(`\nCPU per append per round, service / ceiling: ${each.join(", ")}`);
    console.log(`median: ${median(ratios).toFixed(2)}x`);
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function print(service: Measured | undefined, ceiling: Measured | undefined): void {
  if (!service || !ceiling) return;
  // The profile covers the warm-up too: per append over everything the process served.
  const served = APPENDS + 2 * TASKS;
  const names = [...new Set([...service.buckets.keys(), ...ceiling.buckets.keys()])];
  const us = (m: Measured, name: string) => (m.buckets.get(name) ?? 0) / served;
  names.sort((a, b) => us(service, b) - us(ceiling, b) - (us(service, a) - us(ceiling, a)));
  console.log(
    `${APPENDS} appends, 16 in flight, ${WITH_REDIS ? "3 Redis nodes" : "no Redis"}; sampled us per append`,
  );
  console.log(`${"".padEnd(32)} ${"service".padStart(9)} ${"ceiling".padStart(9)} ${"diff".padStart(9)}`);
  let total = [0, 0];
  for (const name of names) {
    const [s, c] = [us(service, name), us(ceiling, name)];
    total = [(total[0] ?? 0) + s, (total[1] ?? 0) + c];
    if (Math.max(s, c) < 2) continue;
    console.log(
      `${name.padEnd(32)} ${s.toFixed(1).padStart(9)} ${c.toFixed(1).padStart(9)} ${(s - c).toFixed(1).padStart(9)}`,
    );
  }
  const [s, c] = total as [number, number];
  console.log(`${"sampled, all".padEnd(32)} ${s.toFixed(1).padStart(9)} ${c.toFixed(1).padStart(9)}`);
  console.log("\nthe service's 30 costliest functions (self time, us per append):");
  const top = [...service.functions].sort((a, b) => b[1] - a[1]).slice(0, 30);
  for (const [name, value] of top) console.log(`${(value / served).toFixed(1).padStart(8)}  ${name}`);
  const perAppend = (m: Measured) =>
    `${m.writeCalls.toFixed(2)} write and ${m.readCalls.toFixed(2)} read calls, ${m.statements.toFixed(2)} statements`;
  console.log(`\nper append (measured phase): service ${perAppend(service)}; ceiling ${perAppend(ceiling)}`);
  const threadNames = [...new Set([...service.threads.keys(), ...ceiling.threads.keys()])];
  const byThread = (m: Measured) =>
    threadNames.map((name) => `${name} ${(m.threads.get(name) ?? 0).toFixed(3)}`).join(", ");
  console.log(`\nCPU ms per append by thread (/proc, measured phase): service ${byThread(service)}`);
  console.log(`${"".padEnd(50)} ceiling ${byThread(ceiling)}`);
  console.log(
    `\nCPU per append (/proc, measured phase): service ${service.cpuMsPerAppend.toFixed(3)} ms, ceiling ${ceiling.cpuMsPerAppend.toFixed(3)} ms, ${(service.cpuMsPerAppend / ceiling.cpuMsPerAppend).toFixed(2)}x`,
  );
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
