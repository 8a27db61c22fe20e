/** A seeded pseudo-random source (mulberry32), so a soak's load can be replayed from its seed. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A key of `weights` chosen with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let roll = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    return (entries[entries.length - 1] as [K, number])[0];
  }
}

// Ordinary markdown with some non-ASCII (Latin accents, CJK, emoji, a combining mark); no NUL and no
// whitespace other than " " and "\n", so the soak's own append composition needs no Unicode tables.
const WORDS = [
  "plan",
  "step",
  "migrate",
  "verify",
  "rollback",
  "prüfen",
  "Überblick",
  "naïve",
  "café",
  "déjà",
  "東京",
  "計画",
  "テスト",
  "🚀",
  "✓",
  "e\u0301",
  "schema",
  "index",
  "replica",
  "lease",
];

/** Markdown text of about `bytes` UTF-8 bytes: a heading, then list items; each line starts with `token`. */
export function markdown(random: Random, token: string, bytes: number): string {
  const lines = [`## ${token} ${random.pick(WORDS)} ${random.pick(WORDS)}`];
  let size = Buffer.byteLength(lines[0] ?? "");
  for (let i = 0; size < bytes; i++) {
    const words = Array.from({ length: random.int(3, 10) }, () => random.pick(WORDS)).join(" ");
    const line = `- [${random.next() < 0.5 ? " " : "x"}] ${token}.${i} ${words}`;
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  return `${lines.join("\n")}\n`;
}

/** Code points of `text` (what GetPlan's offset and limit count). */
export function codePoints(text: string): string[] {
  return Array.from(text);
}
