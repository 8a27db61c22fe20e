/** What a soak found wrong, by kind; each kind is one check of the verdict. */
export type FindingKind =
  "lost-write" | "read-mismatch" | "version-sequence" | "ack-size" | "watch-gap" | "unexpected-error";

/** Counts and the first few messages of every kind of problem the load and the checks met. */
export class Findings {
  private readonly counts = new Map<FindingKind, number>();
  private readonly samples = new Map<FindingKind, string[]>();

  add(kind: FindingKind, message: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    const list = this.samples.get(kind) ?? [];
    if (list.length < 5) list.push(message);
    this.samples.set(kind, list);
  }

  /** Problems of every kind. */
  total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  count(kind: FindingKind): number {
    return this.counts.get(kind) ?? 0;
  }

  /** Up to five messages of the kind, oldest first. */
  examples(kind: FindingKind): readonly string[] {
    return this.samples.get(kind) ?? [];
  }
}
