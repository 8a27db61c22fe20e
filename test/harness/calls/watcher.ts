import type { ClientReadableStream, ServiceError } from "@grpc/grpc-js";
import type { PlanChange } from "@taskplans/contract";
import { statusDetailsOf } from "@taskplans/client";

/** How a stream ended: code, ErrorInfo reason and metadata (code 1 CANCELLED when the test cancelled). */
export interface WatchEnd {
  readonly code: number;
  readonly reason: string;
  readonly metadata: Record<string, string>;
}

/**
 * Records what a WatchPlan stream delivers and lets a test wait for it by event, never by sleeping.
 * A wait that is not satisfied within `limitMs` fails with what was received (a hang guard, not a
 * timing assertion).
 */
export class Watcher {
  readonly changes: PlanChange[] = [];
  end: WatchEnd | null = null;
  private readonly waiters = new Set<() => void>();

  constructor(readonly stream: ClientReadableStream<PlanChange>) {
    stream.on("data", (change: PlanChange) => {
      this.changes.push(change);
      this.wake();
    });
    stream.on("error", (error: ServiceError) => {
      const info = statusDetailsOf(error)?.errorInfo;
      this.end = { code: error.code, reason: info?.reason ?? "", metadata: info?.metadata ?? {} };
      this.wake();
    });
  }

  /** Versions of the received changes, snapshot excluded. */
  versions(): number[] {
    return this.changes.filter((c) => c.kind !== 1).map((c) => c.plan?.version ?? -1);
  }

  /** Resolves once `count` messages arrived; rejects if the stream ends first. */
  async received(count: number, limitMs = 20_000): Promise<PlanChange[]> {
    await this.until(() => this.changes.length >= count, `${count} messages`, limitMs);
    return this.changes.slice(0, count);
  }

  /** Resolves with how the stream ended. */
  async ended(limitMs = 20_000): Promise<WatchEnd> {
    await this.until(() => this.end !== null, "the stream to end", limitMs, true);
    return this.end as WatchEnd;
  }

  cancel(): void {
    this.stream.cancel();
  }

  private until(done: () => boolean, what: string, limitMs: number, endOk = false): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (done()) finish(null);
        else if (this.end && !endOk)
          finish(
            new Error(`stream ended (${JSON.stringify(this.end)}) before ${what}; got ${this.summary()}`),
          );
      };
      const timer = setTimeout(
        () => finish(new Error(`waited ${limitMs} ms for ${what}; got ${this.summary()}`)),
        limitMs,
      );
      const finish = (error: Error | null) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        if (error) reject(error);
        else resolve();
      };
      this.waiters.add(check);
      check();
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private summary(): string {
    return JSON.stringify(this.changes.map((c) => [c.kind, c.plan?.version]));
  }
}
