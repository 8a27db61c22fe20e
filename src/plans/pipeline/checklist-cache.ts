import type { ChecklistCounter } from "../ports/checklist-counter";
import type { ChecklistCount } from "../ports/records";

/**
 * One write's checklist counter: the replica's (ports/checklist-counter.ts), with the counts the
 * write asked for before its transaction kept, so that the decision, counting the same text, finds
 * it counted (write-command.ts `precount`). A text is found by its value; a write keeps a few.
 */
export class CountCache implements ChecklistCounter {
  private readonly counted = new Map<string, Promise<ChecklistCount>>();

  constructor(private readonly counter: ChecklistCounter) {}

  count(text: string): Promise<ChecklistCount> {
    let count = this.counted.get(text);
    if (count === undefined) {
      count = this.counter.count(text);
      this.counted.set(text, count);
      // A failed count is not kept: the decision asks again, and its failure fails the write.
      count.catch(() => this.counted.delete(text));
    }
    return count;
  }
}
