/**
 * Where a rule's regex runs: windows of text around its keyword hits, merged, instead of the whole
 * text (gitleaks runs a rule on the whole file once a keyword occurs anywhere in it). The cost of a
 * rule is then the text near its keywords, not the plan's length, and, because merged windows never
 * overlap, at most the text's length once per rule: the scan stays linear (docs/secrets.md).
 *
 * A window is the hit's line (and more lines for the rules that span them), clipped to `chars` characters from the
 * hit, so one long line cannot make every hit on it scan the whole line.
 */

/** How far a rule's window reaches around a keyword hit. */
export interface WindowReach {
  /** Whole lines before and after the hit's line (0: the hit's line only). */
  readonly linesBefore: number;
  readonly linesAfter: number;
  /** At most this many UTF-16 code units before the hit's start and after its end. */
  readonly charsBefore: number;
  readonly charsAfter: number;
}

/**
 * The default: a secret and its keyword share a line (gitleaks' rules put the keyword in the
 * match), and a token is at most a few hundred characters.
 */
export const DEFAULT_REACH: WindowReach = Object.freeze({
  linesBefore: 0,
  linesAfter: 0,
  charsBefore: 512,
  charsAfter: 512,
});

/** Offsets of every `\n` in a text, so that a line's bounds are array reads. */
export class LineIndex {
  private readonly breaks: Int32Array;
  private readonly count: number;

  constructor(private readonly text: string) {
    let count = 0;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
    const breaks = new Int32Array(count);
    let k = 0;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) breaks[k++] = i;
    this.breaks = breaks;
    this.count = count;
  }

  /** The 0-based line holding `offset` (binary search: a handful of calls per finding). */
  lineOf(offset: number): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.breaks[mid]! < offset) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Offset of the first character of `line` (clamped to the text). */
  lineStart(line: number): number {
    if (line <= 0) return 0;
    if (line > this.count) return this.text.length;
    return this.breaks[line - 1]! + 1;
  }

  /** Offset just past the last character of `line` (its `\n` excluded). */
  lineEnd(line: number): number {
    if (line < 0) return 0;
    if (line >= this.count) return this.text.length;
    return this.breaks[line]!;
  }
}

/**
 * Collects one rule's windows from hits given in increasing order of `line` (the order the keyword
 * automaton reports them), merging each into the last window when they touch.
 */
export class WindowCollector {
  /** Flat [start, end) pairs. */
  readonly bounds: number[] = [];
  /** Flat [start, line] pairs of the hits themselves, in order (for anchored rules). */
  readonly hits: number[] = [];

  constructor(
    private readonly lines: LineIndex,
    private readonly reach: WindowReach,
  ) {}

  /** Adds the window around a hit at [start, end) on 0-based line `line`. */
  add(start: number, end: number, line: number): void {
    const { reach, lines, bounds } = this;
    this.hits.push(start, line);
    const from = Math.max(lines.lineStart(line - reach.linesBefore), start - reach.charsBefore);
    const to = Math.min(lines.lineEnd(line + reach.linesAfter), end + reach.charsAfter);
    const last = bounds.length - 2;
    if (last >= 0 && from <= bounds[last + 1]!) {
      // A shorter keyword ending later can start a little earlier: widen back, never into the
      // window before, so that windows stay disjoint (each character read once per rule).
      const floor = last >= 2 ? bounds[last - 1]! : 0;
      if (from < bounds[last]!) bounds[last] = Math.max(floor, from);
      if (to > bounds[last + 1]!) bounds[last + 1] = to;
      return;
    }
    bounds.push(from, to);
  }
}
