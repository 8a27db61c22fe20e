/**
 * Turns of the event loop handed out one at a time (issue 54: no request may hold the loop for
 * long). The slow work of diffs and merges runs in jsdiff's slices, one edit length per timer tick,
 * but each still has pieces that run in one go, linear in its texts: splitting 256 KiB into lines
 * before the search, building the patch text after it (each a few ms). Eight diffs answered in the
 * same tick would run theirs back to back; `turn()` queues each piece so that at most one runs per
 * turn of the loop, with the loop's I/O (other callers, health checks) polled between them.
 */
export class LoopTurns {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves on a turn of the loop of its own, in the order asked (FIFO). */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  // One waiter per setImmediate; one queued from within a check phase runs in the next turn, after
  // the poll phase, so I/O is served between any two pieces.
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}

/** The process's one event loop, shared by every diff and merge, and by watches catching up with content. */
export const loopTurns = new LoopTurns();
