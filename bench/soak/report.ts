import { TABLES } from "./database";
import { median } from "./latency";
import { serverEnv } from "./settings";
import type { Check } from "./verdict";
import type { IntervalRecord, SoakSettings, TopologyResult } from "./types";

const out = (line = "") => process.stdout.write(`${line}\n`);
const int = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "n/a");
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The seed and every setting, first thing in the output (a run is replayed from these). */
export function printSettings(settings: SoakSettings): void {
  const s = settings;
  out(
    `soak: seed ${s.seed} (SOAK_SEED), topologies ${s.topologies.join(" + ")}, ${s.durationMs / 1000} s of load each, a report every ${s.reportIntervalMs / 1000} s, warm-up ${s.warmupMs / 1000} s`,
  );
  out(
    `soak: ${s.workers} workers; tasks: ${s.ledgerTasks} ledger (appends only), ${s.mixedTasks} mixed, ${s.contendedTasks} contended (${s.contendedWriters} writers each); ${s.watchers} WatchPlan watchers; ledger/contended tasks rotated at ${s.rotateBytes} bytes, mixed ones at ${s.rotateRevisions} revisions`,
  );
  out(
    `soak: server environment: ${Object.entries(serverEnv(s))
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")}`,
  );
  out(
    `soak: bounds: health <= ${s.healthBoundMs} ms; p99 trend <= ${s.p99Factor}x (or +${s.p99FloorMs} ms); RSS trend <= ${s.rssFactor}x (or +${s.rssFloorMb} MB); database file <= base + ${s.dbFactor}x retained bytes; 0 lost writes, 0 watch gaps, 0 unexpected errors${s.inject !== "none" ? `; SOAK_INJECT=${s.inject}` : ""}`,
  );
}

/** One report interval: a line of process and database figures, then p50/p99 per call. */
export function printInterval(name: string, record: IntervalRecord, final: boolean): void {
  let calls = 0;
  for (const figures of record.calls.values()) calls += figures.count;
  const label = final ? "final (idle)" : `${record.atS.toFixed(0)} s`;
  const servers = record.servers
    .map(
      (s) =>
        `${s.name} RSS ${s.rssMb.toFixed(0)} MB, CPU ${s.cpuPct.toFixed(0)}%, loop p50/p99/max ${ms(s.metrics?.loopP50Ms ?? NaN)}/${ms(s.metrics?.loopP99Ms ?? NaN)}/${ms(s.metrics?.loopMaxMs ?? NaN)} ms`,
    )
    .join("; ");
  const rows = TABLES.map((t) => `${t} ${int(record.db.rows[t])}`).join(", ");
  out(
    `[${name}] ${label}: ${int(calls)} calls, ${int(record.writes)} writes; health p50/p99/max ${ms(record.health.p50)}/${ms(record.health.p99)}/${ms(record.health.max)} ms; ${servers}; soak CPU ${record.soakCpuPct.toFixed(0)}%`,
  );
  out(
    `[${name}]   db ${mib(record.db.fileBytes)}${record.db.walBytes > 0 ? ` (WAL ${mib(record.db.walBytes)})` : ""} of bound ${mib(record.fileBound)}; rows: ${rows}; overdue change rows ${record.db.staleChanges}`,
  );
  if (final) return;
  for (const [call, f] of record.calls) {
    out(
      `[${name}]   ${call.padEnd(34)} ${String(f.count).padStart(7)} calls ${String(f.errors).padStart(3)} err  p50 ${ms(f.p50).padStart(7)}  p99 ${ms(f.p99).padStart(7)} ms`,
    );
  }
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}

function perServer(result: TopologyResult, figure: (values: number[], server: string) => string): string {
  const names = result.intervals[0]?.servers.map((s) => s.name) ?? [];
  return names
    .map((server) => {
      const values = result.intervals.map((i) => i.servers.find((s) => s.name === server));
      return `${server}: ${figure(
        values.map((v) => v?.rssMb ?? NaN),
        server,
      )}`;
    })
    .join("; ");
}

/** The summary: figures per topology, p50/p99 per call, then each check; failures spelled out. */
export function printSummary(
  results: readonly TopologyResult[],
  checks: readonly Check[][],
  settings: SoakSettings,
): void {
  out();
  out(`## Soak summary (seed ${settings.seed}, ${settings.durationMs / 1000} s of load per topology)`);
  out();
  out(row(["figure", ...results.map((r) => r.name)]));
  out(row(["---", ...results.map(() => "---:")]));
  const line = (label: string, value: (r: TopologyResult) => string) =>
    out(row([label, ...results.map(value)]));
  const calls = (r: TopologyResult) => [...r.overall.values()].reduce((sum, f) => sum + f.count, 0);
  line("load time", (r) => `${r.elapsedS.toFixed(0)} s${r.stoppedEarly ? " (stopped early)" : ""}`);
  line("calls (per s)", (r) => `${int(calls(r))} (${int(calls(r) / Math.max(1, r.elapsedS))}/s)`);
  line("writes acknowledged", (r) =>
    int(
      r.counts.ledgerFragments + r.counts.contendedFragments + r.counts.mixedWrites + r.counts.tasksCreated,
    ),
  );
  line("tasks created / deleted (rotation)", (r) => `${r.counts.tasksCreated} / ${r.counts.tasksDeleted}`);
  line(
    "writes per prune interval, median / max (>= 1,000)",
    (r) =>
      `${int(r.writesPerPrune.median)} / ${int(r.writesPerPrune.max)} (${r.writesPerPrune.overBatch} of ${r.writesPerPrune.windows})`,
  );
  line(
    "health check p99 of intervals, median / max ms",
    (r) => `${ms(median(r.intervals.map((i) => i.health.p99)))} / ${ms(r.healthMaxMs)}`,
  );
  line("event-loop delay p99, median of intervals / max ms", (r) =>
    (r.intervals[0]?.servers ?? [])
      .map((s) => {
        const values = r.intervals.map((i) => i.servers.find((x) => x.name === s.name)?.metrics);
        const p99 = values.map((m) => m?.loopP99Ms ?? NaN).filter(Number.isFinite);
        const max = values.map((m) => m?.loopMaxMs ?? NaN).filter(Number.isFinite);
        return `${s.name} ${ms(median(p99))} / ${ms(Math.max(0, ...max))}`;
      })
      .join("; "),
  );
  line("RSS first / peak / last MB", (r) =>
    perServer(
      r,
      (v) =>
        `${v[0]?.toFixed(0)} / ${Math.max(0, ...v.filter(Number.isFinite)).toFixed(0)} / ${v[v.length - 1]?.toFixed(0)}`,
    ),
  );
  line("database peak / bound at the peak", (r) => {
    const peak = r.intervals.reduce<IntervalRecord | undefined>(
      (m, i) => (!m || i.db.fileBytes > m.db.fileBytes ? i : m),
      undefined,
    );
    return peak ? `${mib(peak.db.fileBytes)} / ${mib(peak.fileBound)}` : "n/a";
  });
  line("rows at the last report (tasks, plans, revisions, changes, requests)", (r) => {
    const last = r.intervals[r.intervals.length - 1];
    return last ? TABLES.map((t) => int(last.db.rows[t])).join(" / ") : "n/a";
  });
  line("WatchPlan delivery p50 / p99 ms (commit to receipt)", (r) => {
    const f = r.overall.get("WatchPlan delivery");
    return f ? `${ms(f.p50)} / ${ms(f.p99)}` : "n/a";
  });
  line("writes retried after ABORTED WRITE_CONFLICT (nothing written)", (r) =>
    r.conflicts.size === 0 ? "0" : [...r.conflicts].map(([call, n]) => `${call} ${n}`).join("; "),
  );
  line("verdict", (r) => (checks[results.indexOf(r)]?.every((c) => c.pass) ? "PASS" : "FAIL"));

  out();
  const names = [...new Set(results.flatMap((r) => [...r.overall.keys()]))].sort();
  out(row(["call", ...results.flatMap((r) => [`${r.name} calls`, "err", "p50 ms", "p99 ms"])]));
  out(row(["---", ...results.flatMap(() => ["---:", "---:", "---:", "---:"])]));
  for (const name of names) {
    out(
      row([
        name,
        ...results.flatMap((r) => {
          const f = r.overall.get(name);
          return f ? [int(f.count), String(f.errors), ms(f.p50), ms(f.p99)] : ["", "", "", ""];
        }),
      ]),
    );
  }

  out();
  out(row(["check", "bound", ...results.map((r) => r.name)]));
  out(row(["---", "---", ...results.map(() => "---")]));
  const first = checks[0] ?? [];
  for (const [i, check] of first.entries()) {
    out(
      row([
        check.name,
        check.bound,
        ...checks.map((list) => `${list[i]?.pass ? "PASS" : "FAIL"}: ${list[i]?.figure ?? ""}`),
      ]),
    );
  }
  for (const [i, result] of results.entries()) {
    for (const check of (checks[i] ?? []).filter((c) => !c.pass)) {
      out(`SOAK FAILED [${result.name}] ${check.name} (bound ${check.bound}): ${check.figure}`);
      for (const detail of check.details) out(`  - ${detail}`);
    }
  }
}
