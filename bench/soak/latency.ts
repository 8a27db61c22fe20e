/** Quantile of unsorted values (nearest rank); 0 for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

export const median = (values: readonly number[]) => quantile(values, 0.5);

/** Latency figures of one call name over one report interval (or the whole run). */
export interface CallFigures {
  readonly count: number;
  readonly errors: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * Latencies per call name, kept per report interval (for the periodic table and the trend rule)
 * and for the whole run (for the summary).
 */
export class LatencyBook {
  private current = new Map<string, number[]>();
  private currentErrors = new Map<string, number>();
  private readonly all = new Map<string, number[]>();
  private readonly allErrors = new Map<string, number>();
  /** One map per closed interval. */
  readonly intervals: ReadonlyMap<string, CallFigures>[] = [];

  record(name: string, ms: number): void {
    push(this.current, name, ms);
    push(this.all, name, ms);
  }

  error(name: string): void {
    this.currentErrors.set(name, (this.currentErrors.get(name) ?? 0) + 1);
    this.allErrors.set(name, (this.allErrors.get(name) ?? 0) + 1);
  }

  /** Closes the current interval and returns its figures. */
  closeInterval(): ReadonlyMap<string, CallFigures> {
    const figures = summarize(this.current, this.currentErrors);
    (this.intervals as ReadonlyMap<string, CallFigures>[]).push(figures);
    this.current = new Map();
    this.currentErrors = new Map();
    return figures;
  }

  /** Figures over the whole run. */
  overall(): ReadonlyMap<string, CallFigures> {
    return summarize(this.all, this.allErrors);
  }
}

function push(map: Map<string, number[]>, name: string, value: number): void {
  const list = map.get(name);
  if (list) list.push(value);
  else map.set(name, [value]);
}

function summarize(values: Map<string, number[]>, errors: Map<string, number>): Map<string, CallFigures> {
  const names = [...new Set([...values.keys(), ...errors.keys()])].sort();
  return new Map(
    names.map((name) => {
      const list = values.get(name) ?? [];
      return [
        name,
        {
          count: list.length,
          errors: errors.get(name) ?? 0,
          p50: quantile(list, 0.5),
          p99: quantile(list, 0.99),
          max: list.reduce((m, v) => Math.max(m, v), 0),
        },
      ];
    }),
  );
}
