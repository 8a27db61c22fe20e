import { memoryMb, processCpuMs } from "../shared/process-stats";
import { SoakCalls } from "./calls";
import { Findings } from "./findings";
import { LatencyBook, quantile } from "./latency";
import { HealthProbe, scrapeMetrics } from "./probes";
import { Random } from "./random";
import { printInterval } from "./report";
import { changeRowsBound, GRACE_MS, retainedBytesBound, staleCutoff } from "./retention";
import { tail } from "./server";
import { type Cleanup, startTopology } from "./topology";
import { SoakLoad } from "./workload";
import type { IntervalRecord, SoakSettings, TopologyName, TopologyResult } from "./types";

/** Bytes a database file may hold beyond `dbFactor` x the retained bytes (schema, WAL, extents). */
const BASE_BYTES: Record<TopologyName, number> = { embedded: 16 * 1024 * 1024, mariadb: 64 * 1024 * 1024 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the topology, runs the load for the configured time while sampling, then checks everything. */
export async function runTopology(
  name: TopologyName,
  settings: SoakSettings,
  index: number,
  cleanup: Cleanup,
): Promise<TopologyResult> {
  const topology = await startTopology(name, settings, cleanup);
  for (const line of topology.describe) process.stdout.write(`[${name}] ${line}\n`);
  const book = new LatencyBook();
  const findings = new Findings();
  const random = new Random(settings.seed + index);
  const calls = new SoakCalls(topology.servers, 4, book, findings, random);
  cleanup.add("client channels", async () => calls.close());
  let stoppedEarly: string | null = null;
  let wake: () => void = () => undefined;
  const stop = (reason: string) => {
    if (stoppedEarly !== null) return;
    stoppedEarly = reason;
    process.stdout.write(`[${name}] STOPPING: ${reason}\n`);
    wake();
  };
  const probes = topology.servers.map((server) => new HealthProbe(server, settings.healthBoundMs, stop));
  for (const probe of probes) probe.start();
  cleanup.add("health probes", async () => void (await Promise.all(probes.map((p) => p.stop()))));

  const load = new SoakLoad(
    { calls, random, findings, settings, now: Date.now },
    book,
    topology.servers.length,
  );
  await load.start();
  const started = Date.now();
  const retention = {
    staleMax: 0,
    overCount: 0,
    overCountExamples: [] as string[],
    fileViolations: [] as string[],
    finalChangeRows: null as number | null,
    idleWaitS: 0,
  };
  const intervals: IntervalRecord[] = [];
  let highWater = 0;
  let writesBefore = 0;
  let lastAt = Date.now();
  const cpuBefore = new Map(topology.servers.map((s) => [s.name, processCpuMs(s.pid)]));
  let soakCpuBefore = process.cpuUsage();
  const sample = async (final: boolean): Promise<IntervalRecord> => {
    const now = Date.now();
    const db = await topology.database.sample(staleCutoff(settings.retention, now));
    const retained = retainedBytesBound(load.tasks.values(), settings.retention, now);
    highWater = Math.max(highWater, retained);
    const fileBound = BASE_BYTES[name] + settings.dbFactor * highWater;
    retention.staleMax = Math.max(retention.staleMax, db.staleChanges);
    if (db.fileBytes > fileBound) {
      if (retention.fileViolations.length < 5)
        retention.fileViolations.push(
          `${(db.fileBytes / 2 ** 20).toFixed(1)} MiB > bound ${(fileBound / 2 ** 20).toFixed(1)} MiB at ${((now - started) / 1000).toFixed(0)} s`,
        );
    }
    for (const [taskId, rows] of db.changesPerTask) {
      const task = load.tasks.get(taskId);
      const bound = task ? changeRowsBound(task, settings.retention, now) : Infinity;
      if (rows <= bound) continue;
      retention.overCount++;
      if (retention.overCountExamples.length < 5) {
        retention.overCountExamples.push(
          `${taskId}: ${rows} change rows > bound ${bound} at ${((now - started) / 1000).toFixed(0)} s`,
        );
      }
    }
    const healthLatencies = probes.flatMap((p) => p.drain());
    const spanMs = Math.max(1, now - lastAt);
    lastAt = now;
    const servers = await Promise.all(
      topology.servers.map(async (server) => {
        const alive = server.exitReason() === null;
        const cpu = alive ? processCpuMs(server.pid) : 0;
        const cpuPct = (100 * (cpu - (cpuBefore.get(server.name) ?? cpu))) / spanMs;
        cpuBefore.set(server.name, cpu);
        return {
          name: server.name,
          rssMb: alive ? memoryMb(server.pid).rss : 0,
          cpuPct,
          metrics: await scrapeMetrics(server.metricsPort),
        };
      }),
    );
    const soakCpu = process.cpuUsage(soakCpuBefore);
    soakCpuBefore = process.cpuUsage();
    const writesNow = load.writeBins.reduce((sum, n) => sum + n, 0);
    const record: IntervalRecord = {
      atS: (now - started) / 1000,
      warm: (intervals[intervals.length - 1]?.atS ?? 0) * 1000 >= settings.warmupMs,
      calls: book.closeInterval(),
      health: {
        p50: quantile(healthLatencies, 0.5),
        p99: quantile(healthLatencies, 0.99),
        max: healthLatencies.reduce((m, v) => Math.max(m, v), 0),
      },
      servers,
      soakCpuPct: (100 * (soakCpu.user + soakCpu.system)) / 1000 / spanMs,
      db,
      retainedBytes: retained,
      fileBound,
      writes: writesNow - writesBefore,
    };
    writesBefore = writesNow;
    if (!final) intervals.push(record);
    printInterval(name, record, final);
    return record;
  };

  try {
    while (stoppedEarly === null && Date.now() - started < settings.durationMs) {
      const next = started + (intervals.length + 1) * settings.reportIntervalMs;
      await Promise.race([
        sleep(Math.max(0, Math.min(next, started + settings.durationMs) - Date.now())),
        new Promise<void>((r) => (wake = r)),
      ]);
      const exited = topology.servers.find((s) => s.exitReason() !== null);
      if (exited) stop(`${exited.name} ${exited.exitReason()}`);
      if (stoppedEarly === null) await sample(false);
    }
    const elapsedS = (Date.now() - started) / 1000;
    if (stoppedEarly === null) await load.stop();
    else {
      // Calls in flight to a hung server would wait out their deadline: leave them; stopping the
      // server (cleanup) fails them.
      calls.aborted = true;
      await Promise.race([load.stop(), sleep(2_000)]);
    }

    const behind: string[] = [];
    if (stoppedEarly === null) {
      // Every watcher must reach its task's final version; then every task's final state is checked.
      for (const watcher of load.watchers) {
        const target = watcher.task.soleWriter
          ? watcher.task.version
          : Number(
              (await calls.run("GetPlan (verify)", (c) => c.plans.getPlan({ taskId: watcher.task.id }))).plan
                ?.version,
            );
        if (!(await watcher.reached(target, 15_000)))
          behind.push(`${watcher.task.id}: watcher at ${watcher.lastVersion}, plan at ${target}`);
      }
      for (const watcher of load.watchers) watcher.stop();
      await load.verifyAll();
      // Idle until every change row has passed the age limit and a pass has run: none may be left.
      const idleMs = settings.retention.maxAgeMs + settings.retention.pruneIntervalMs + GRACE_MS;
      process.stdout.write(
        `[${name}] load stopped; idle ${(idleMs / 1000).toFixed(0)} s so the age limit empties the change history\n`,
      );
      await Promise.race([sleep(idleMs), new Promise<void>((r) => (wake = r))]);
      retention.idleWaitS = idleMs / 1000;
      if (stoppedEarly === null) retention.finalChangeRows = (await sample(true)).db.rows.task_plan_changes;
    } else {
      for (const watcher of load.watchers) watcher.stop();
    }
    const windows = writesPerWindow(
      load.writeBins,
      Math.max(1, Math.round(settings.retention.pruneIntervalMs / 100)),
    );
    // The servers' own words (warn level and above) when something went wrong, before cleanup
    // removes their temp dir.
    const troubled =
      stoppedEarly !== null || retention.staleMax > 0 || retention.overCount > 0 || findings.total() > 0;
    if (troubled || calls.conflicts.size > 0) {
      for (const server of topology.servers) {
        process.stdout.write(`[${name}] ${server.name} log, last lines:\n${tail(server.logFile, 3000)}\n`);
      }
    }
    return {
      name,
      describe: topology.describe,
      intervals,
      overall: book.overall(),
      findings,
      counts: load.counts,
      elapsedS,
      healthMaxMs: Math.max(0, ...probes.map((p) => p.maxMs)),
      stoppedEarly,
      retention,
      writesPerPrune: {
        median: quantile(windows, 0.5),
        max: windows.reduce((m, v) => Math.max(m, v), 0),
        overBatch: windows.filter((n) => n >= 1_000).length,
        windows: windows.length,
      },
      watchers: {
        count: load.watchers.length + load.pastWatchers.length,
        received: [...load.watchers, ...load.pastWatchers].reduce((sum, w) => sum + w.received, 0),
        resumes: [...load.watchers, ...load.pastWatchers].reduce((sum, w) => sum + w.resumes, 0),
        expired: [...load.watchers, ...load.pastWatchers].reduce((sum, w) => sum + w.expired, 0),
        behind,
      },
      conflicts: new Map(calls.conflicts),
    };
  } finally {
    for (const watcher of load.watchers) watcher.stop();
  }
}

/** Acknowledged writes in consecutive windows of `width` 100-ms bins (one prune interval each). */
function writesPerWindow(bins: readonly number[], width: number): number[] {
  const windows: number[] = [];
  for (let start = 0; start + width <= bins.length; start += width) {
    windows.push(bins.slice(start, start + width).reduce((sum, n) => sum + n, 0));
  }
  return windows;
}
