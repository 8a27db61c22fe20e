/**
 * Aho-Corasick over ASCII keywords, case-insensitive: one pass over the text finds every occurrence
 * of every keyword, in time linear in the text (plus the occurrences reported). The scanner uses it
 * for gitleaks' keyword pre-filter and for allowlist stop words, where a loop of `includes` per
 * keyword would cost keywords x length.
 *
 * Case folding is ASCII only (A-Z to a-z) and in place, so offsets are the text's own UTF-16
 * offsets; a character outside ASCII never matches (every keyword of the vendored set is ASCII).
 */
export class KeywordAutomaton {
  /** Dense transitions: `next[state * 128 + code]`, the failure links folded in. */
  private readonly next: Int32Array;
  /** For each state, the indexes of the keywords ending there (its own and its suffixes'). */
  private readonly outputs: readonly (readonly number[])[];
  /** Each keyword's length, by index. */
  readonly lengths: readonly number[];

  /** @param keywords ASCII strings (lower case or not); an empty or non-ASCII keyword throws. */
  constructor(keywords: readonly string[]) {
    const goto: number[][] = [[]];
    const out: number[][] = [[]];
    keywords.forEach((raw, index) => {
      const word = raw.toLowerCase();
      if (word.length === 0 || !/^[\x20-\x7e]+$/.test(word)) {
        throw new Error(`keyword ${index} is empty or not printable ASCII`);
      }
      let state = 0;
      for (let i = 0; i < word.length; i++) {
        const code = word.charCodeAt(i);
        let to = goto[state]![code];
        if (to === undefined) {
          to = goto.length;
          goto.push([]);
          out.push([]);
          goto[state]![code] = to;
        }
        state = to;
      }
      out[state]!.push(index);
    });
    const next = new Int32Array(goto.length * 128);
    const fail = new Int32Array(goto.length);
    const queue: number[] = [];
    for (let code = 0; code < 128; code++) {
      const to = goto[0]![code];
      if (to !== undefined) queue.push(to);
      next[code] = to ?? 0;
    }
    // Breadth first: a state's failure target is shallower, so its row is complete when read.
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      out[state]!.push(...out[fail[state]!]!);
      for (let code = 0; code < 128; code++) {
        const to = goto[state]![code];
        const viaFail = next[fail[state]! * 128 + code]!;
        if (to === undefined) {
          next[state * 128 + code] = viaFail;
        } else {
          fail[to] = viaFail;
          next[state * 128 + code] = to;
          queue.push(to);
        }
      }
    }
    this.next = next;
    this.outputs = out;
    this.lengths = keywords.map((k) => k.length);
  }

  /**
   * Calls `onMatch(keywordIndex, end)` for each occurrence (`end` exclusive), in order of `end`,
   * of `text.slice(from, to)`.
   */
  forEach(text: string, onMatch: (keyword: number, end: number) => void, from = 0, to = text.length): void {
    const { next, outputs } = this;
    let state = 0;
    for (let i = from; i < to; i++) {
      let code = text.charCodeAt(i);
      if (code >= 128) {
        state = 0;
        continue;
      }
      if (code >= 65 && code <= 90) code |= 32;
      state = next[state * 128 + code]!;
      const found = outputs[state]!;
      for (let k = 0; k < found.length; k++) onMatch(found[k]!, i + 1);
    }
  }

  /** Whether `text` (or its slice) contains any keyword: stops at the first. */
  containsAny(text: string, from = 0, to = text.length): boolean {
    const { next, outputs } = this;
    let state = 0;
    for (let i = from; i < to; i++) {
      let code = text.charCodeAt(i);
      if (code >= 128) {
        state = 0;
        continue;
      }
      if (code >= 65 && code <= 90) code |= 32;
      state = next[state * 128 + code]!;
      if (outputs[state]!.length > 0) return true;
    }
    return false;
  }
}
