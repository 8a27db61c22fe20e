import type { FindingKind } from "./findings";
import { trend } from "./trend";
import type { SoakSettings, TopologyResult } from "./types";

/** One pass/fail line of a topology's verdict. */
export interface Check {
  readonly name: string;
  readonly bound: string;
  readonly figure: string;
  readonly pass: boolean;
  /** What failed, for the message. */
  readonly details: readonly string[];
}

/**
 * A call needs this many samples in an interval for its p99 there to count in the trend (a p99 of
 * fewer is close to the interval's maximum, one slow call); the pooled "(all writes)" and "(all
 * reads)" always have enough.
 */
const MIN_CALLS = 200;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

function findingCheck(
  result: TopologyResult,
  name: string,
  kinds: readonly FindingKind[],
  figure: string,
): Check {
  const count = kinds.reduce((sum, kind) => sum + result.findings.count(kind), 0);
  return {
    name,
    bound: "0",
    figure: count === 0 ? figure : `${count} problems`,
    pass: count === 0,
    details: kinds.flatMap((kind) => result.findings.examples(kind).map((m) => `${kind}: ${m}`)),
  };
}

/** The checks of one topology's run, in the order the summary prints them. */
export function checksOf(result: TopologyResult, settings: SoakSettings): Check[] {
  const warm = result.intervals.filter((i) => i.warm);
  const checks: Check[] = [];
  checks.push({
    name: "health check latency, max",
    bound: `<= ${settings.healthBoundMs} ms`,
    figure: `${result.healthMaxMs.toFixed(1)} ms`,
    pass: result.stoppedEarly === null && result.healthMaxMs <= settings.healthBoundMs,
    details: result.stoppedEarly ? [result.stoppedEarly] : [],
  });

  const names = [...result.overall.keys()].filter((n) => !n.includes("(verify)"));
  const p99 = names.flatMap((name) => {
    const series = warm.map((i) => {
      const figures = i.calls.get(name);
      return figures && figures.count >= MIN_CALLS ? figures.p99 : null;
    });
    const t = trend(series, settings.p99Factor, settings.p99FloorMs);
    return t ? [{ name, ...t }] : [];
  });
  const worst = [...p99].sort((a, b) => b.last / (b.first || 1) - a.last / (a.first || 1))[0];
  checks.push({
    name: "p99 trend (median of last third / first third of the intervals after warm-up)",
    bound: `not > ${settings.p99Factor}x and +${settings.p99FloorMs} ms`,
    figure: worst
      ? `worst ${worst.name}: ${worst.first.toFixed(1)} -> ${worst.last.toFixed(1)} ms (${(worst.last / (worst.first || 1)).toFixed(2)}x), ${p99.length} calls compared`
      : "n/a (too few intervals)",
    pass: p99.every((t) => !t.rising),
    details: p99
      .filter((t) => t.rising)
      .map((t) => `${t.name} p99 rose from ${t.first.toFixed(1)} to ${t.last.toFixed(1)} ms`),
  });

  const servers = result.intervals[0]?.servers.map((s) => s.name) ?? [];
  const rss = servers.flatMap((server) => {
    const t = trend(
      warm.map((i) => i.servers.find((s) => s.name === server)?.rssMb ?? null),
      settings.rssFactor,
      settings.rssFloorMb,
    );
    return t ? [{ server, ...t }] : [];
  });
  checks.push({
    name: "RSS trend (same rule)",
    bound: `not > ${settings.rssFactor}x and +${settings.rssFloorMb} MB`,
    figure:
      rss.length > 0
        ? rss.map((t) => `${t.server} ${t.first.toFixed(0)} -> ${t.last.toFixed(0)} MB`).join(", ")
        : "n/a (too few intervals)",
    pass: rss.every((t) => !t.rising),
    details: rss
      .filter((t) => t.rising)
      .map((t) => `${t.server} RSS rose from ${t.first.toFixed(0)} to ${t.last.toFixed(0)} MB`),
  });

  const peak = result.intervals.reduce(
    (m, i) => (i.db.fileBytes / i.fileBound > m.ratio ? { ratio: i.db.fileBytes / i.fileBound, i } : m),
    {
      ratio: 0,
      i: result.intervals[0],
    },
  );
  checks.push({
    name: "database size within what retention allows",
    bound: `<= base + ${settings.dbFactor}x retained bytes`,
    figure: peak.i
      ? `at most ${(peak.ratio * 100).toFixed(0)}% of the bound (${mb(peak.i.db.fileBytes)} of ${mb(peak.i.fileBound)})`
      : "n/a",
    pass: result.retention.fileViolations.length === 0,
    details: result.retention.fileViolations.slice(0, 5),
  });
  const r = result.retention;
  const finalRows = r.finalChangeRows;
  checks.push({
    name: "change rows pruned (age, per-task count, and empty after idling past the age limit)",
    bound: "0 overdue",
    figure: `overdue rows max ${r.staleMax}, samples of a task over the count rule ${r.overCount}, left after ${r.idleWaitS.toFixed(0)} s idle ${finalRows ?? "n/a"}`,
    pass: r.staleMax === 0 && r.overCount === 0 && (finalRows === 0 || result.stoppedEarly !== null),
    details: [
      ...(r.staleMax > 0 ? [`up to ${r.staleMax} change rows older than max age + interval + grace`] : []),
      ...r.overCountExamples,
      ...(finalRows !== null && finalRows > 0
        ? [`${finalRows} change rows left after idling past the age limit`]
        : []),
    ],
  });
  const c = result.counts;
  checks.push(
    findingCheck(
      result,
      "acknowledged writes present (final plans, reads, acknowledgement sizes, versions)",
      ["lost-write", "read-mismatch", "ack-size", "version-sequence"],
      `${c.ledgerFragments} ledger + ${c.contendedFragments} contended fragments, ${c.mixedWrites} mixed writes; ${c.verifiedTasks} tasks and ${c.verifiedReads} reads verified`,
    ),
  );
  const w = result.watchers;
  const watch = findingCheck(
    result,
    "watch streams gap-free and caught up",
    ["watch-gap"],
    `${w.count} watch streams over the run, ${w.received} changes, ${w.resumes} resumes, ${w.expired} history-expired restarts`,
  );
  checks.push({
    ...watch,
    pass: watch.pass && w.behind.length === 0,
    details: [...watch.details, ...w.behind.slice(0, 5)],
  });
  checks.push(findingCheck(result, "unexpected RPC errors", ["unexpected-error"], "0"));
  return checks;
}
