import type { ServiceError } from "@grpc/grpc-js";
import type { PlanChange } from "@taskplans/contract";
import { type Clients, connect } from "../calls/rpc";

/**
 * A WatchPlan client as an application would write one: it watches a task through one replica after
 * another, and whenever a stream ends (a fault, or its own rotation every `rotateEvery` changes) it
 * resumes on the next replica after the last version it received.
 */
export class ResumingWatcher {
  readonly received: PlanChange[] = [];
  readonly endings = new Map<string, number>();
  sessions = 0;
  private readonly clients: Clients[];
  private stopped = false;
  private current: { cancel(): void } | null = null;
  private readonly running: Promise<void>;

  constructor(
    targets: readonly { host: string; port: number }[],
    private readonly taskId: string,
    private last: number,
    private readonly rotateEvery = 50,
  ) {
    this.clients = targets.map((t) => connect(t.port, undefined, t.host));
    this.running = this.run();
  }

  get lastVersion(): number {
    return this.last;
  }

  /** Resolves once `version` was received; rejects after `limitMs`. */
  async reach(version: number, limitMs = 60_000): Promise<void> {
    const until = Date.now() + limitMs;
    while (this.last < version) {
      if (Date.now() > until)
        throw new Error(`watcher of ${this.taskId} reached ${this.last}, not ${version}: ${this.describe()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.cancel();
    await this.running;
    for (const client of this.clients) client.close();
  }

  describe(): string {
    return `${this.sessions} sessions, endings ${JSON.stringify(Object.fromEntries(this.endings))}`;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const client = this.clients[this.sessions % this.clients.length] as Clients;
      this.sessions += 1;
      const stream = client.plans.watchPlan({
        taskId: this.taskId,
        afterVersion: this.last,
        includeContent: true,
      });
      this.current = stream;
      let taken = 0;
      try {
        for await (const change of stream as AsyncIterable<PlanChange>) {
          this.received.push(change);
          this.last = Math.max(this.last, change.plan?.version ?? this.last);
          if (++taken >= this.rotateEvery) {
            stream.cancel();
            break;
          }
        }
        this.count("rotated");
      } catch (error) {
        const code = (error as ServiceError).code;
        this.count(code === 1 ? "cancelled" : `code ${code}`);
        if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  private count(ending: string): void {
    this.endings.set(ending, (this.endings.get(ending) ?? 0) + 1);
  }
}
