import { median } from "./latency";

/** How a per-interval figure moved over a run. */
export interface Trend {
  /** Median of the first third of the intervals after warm-up. */
  readonly first: number;
  /** Median of the last third. */
  readonly last: number;
  readonly rising: boolean;
}

/**
 * The trend rule: drop the warm-up intervals (null entries are intervals without enough samples and
 * are skipped), split the rest into thirds and compare the median of the last third with the median
 * of the first. The figure "trends upward" when the last is above `factor` times the first AND more
 * than `floor` above it (so a 2 ms p99 becoming 5 ms, or a 10 MB wobble, is noise, not a trend).
 * Medians of thirds ignore single slow intervals (a neighbour's CPU burst, a GC) at either end; a
 * leak or a slowdown that grows with the data moves the whole last third. Null when fewer than three
 * intervals are left.
 */
export function trend(series: readonly (number | null)[], factor: number, floor: number): Trend | null {
  const values = series.filter((v): v is number => v !== null && Number.isFinite(v));
  if (values.length < 3) return null;
  const third = Math.max(1, Math.floor(values.length / 3));
  const first = median(values.slice(0, third));
  const last = median(values.slice(values.length - third));
  return { first, last, rising: last > factor * first && last - first > floor };
}
