/** What a window that saw more than its first event says when it closes. */
export interface WindowSummary {
  /** Events after the first one (the first was logged at once). */
  readonly more: number;
  /** Those events by key; at most `maxKeys` keys, the rest summed under "other". */
  readonly byKey: Readonly<Record<string, number>>;
  readonly windowMs: number;
}

/** How a LogWindow writes: one line for the first event of a window, one for the rest of it. */
export interface LogWindowOptions<E> {
  readonly windowMs: number;
  /** Distinct keys counted per window; later new keys count as "other" (memory stays bounded). */
  readonly maxKeys?: number;
  readonly first: (event: E) => void;
  readonly summary: (summary: WindowSummary) => void;
}

/**
 * Bounds the log lines of an event anyone can cause (a refused request, a CSP report): the first
 * event of a window is written at once (`first`), the others only counted, and when the window
 * closes one line sums them up (`summary`, skipped when there were none). A flood therefore writes at
 * most two lines per window, of a bounded size (STYLE.md habit 17; issue 54, defect 5), whatever its
 * volume. `close()` writes the pending summary and stops the timer (the timer never holds the process).
 */
export class LogWindow<E> {
  private open = false;
  private more = 0;
  private byKey = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: LogWindowOptions<E>) {}

  /** Counts one event under `key`; writes it when it opens a window. */
  add(key: string, event: E): void {
    if (!this.open) {
      this.open = true;
      this.timer = setTimeout(() => this.flush(), this.options.windowMs);
      this.timer.unref();
      this.options.first(event);
      return;
    }
    this.more += 1;
    const maxKeys = this.options.maxKeys ?? 16;
    const counted = this.byKey.has(key) || this.byKey.size < maxKeys ? key : "other";
    this.byKey.set(counted, (this.byKey.get(counted) ?? 0) + 1);
  }

  /** Writes the open window's summary (if it counted anything beyond its first event) and stops. */
  close(): void {
    this.flush();
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.more > 0)
      this.options.summary({
        more: this.more,
        byKey: Object.fromEntries(this.byKey),
        windowMs: this.options.windowMs,
      });
    this.open = false;
    this.more = 0;
    this.byKey = new Map();
  }
}

/** `value` cut to `max` characters (with "…" when cut), for a field of a log line a caller chose. */
export function truncated(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
