import { status } from "@grpc/grpc-js";
import { createClient, reasonOf } from "@taskplans/client";
import type { Clients } from "../../test/harness/calls/rpc";
import type { Findings } from "./findings";
import type { LatencyBook } from "./latency";
import type { Random } from "./random";
import type { ServerProcess } from "./server";

/** gRPC codes whose write outcome is unknown (the write may or may not have committed). */
const UNKNOWN_OUTCOME = new Set([1, 4, 13, 14]); // CANCELLED, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE

const READS = /^(GetPlan|ListPlanRevisions|GetPlanRevision)\b/;

/** The pooled group a call name is also recorded under (the final checks' calls are not pooled). */
export function groupOf(name: string): string | null {
  if (name.includes("(verify)")) return null;
  return READS.test(name) ? "(all reads)" : "(all writes)";
}

/** Deadline of every soak call: far above any healthy latency, below the soak's own patience. */
export const CALL_TIMEOUT_MS = 30_000;

/** A failed call as the soak classifies it. */
export class CallFailure extends Error {
  constructor(
    readonly call: string,
    readonly code: number,
    readonly reason: string | null,
    readonly detail: string,
  ) {
    super(
      `${call} failed: ${(status as unknown as Record<number, string>)[code] ?? code} ${reason ?? ""} ${detail}`.trim(),
    );
  }

  /** Whether a write that failed this way may still have committed. */
  get outcomeUnknown(): boolean {
    return UNKNOWN_OUTCOME.has(this.code) || this.reason === "LOCK_UNAVAILABLE";
  }
}

/**
 * The soak's channels to every server (a few per server, as a fleet of callers would have) and the
 * one way it calls them: timed into the latency book under a call name, failures classified.
 */
export class SoakCalls {
  private readonly channels: { server: string; client: Clients }[] = [];
  /** Set once the run stops on a failure: calls cancelled by closing the channels are not findings. */
  aborted = false;
  /**
   * Writes answered ABORTED WRITE_CONFLICT (a deadlock or lock wait timeout in the database; nothing
   * was written) and retried, as the README tells clients to: a figure of the summary, by call.
   */
  readonly conflicts = new Map<string, number>();

  constructor(
    servers: readonly ServerProcess[],
    channelsPerServer: number,
    private readonly book: LatencyBook,
    private readonly findings: Findings,
    private readonly random: Random,
  ) {
    for (let i = 0; i < channelsPerServer; i++) {
      for (const server of servers) {
        // The client package, with a deadline on every call (a hung server fails calls, not the soak)
        // and no retries (the soak counts every failure the server gives).
        const client = createClient(`127.0.0.1:${server.port}`, {
          defaultTimeoutMs: CALL_TIMEOUT_MS,
          retry: false,
        });
        this.channels.push({ server: server.name, client });
      }
    }
  }

  /** A channel to a random server: the load is spread over every replica. */
  client(): Clients {
    return this.random.pick(this.channels).client;
  }

  /** The i-th channel of each server in turn (watchers spread over replicas). */
  clientFor(i: number, servers: number): Clients {
    return (this.channels[i % servers] ?? this.random.pick(this.channels)).client;
  }

  /**
   * Runs one call: its latency is recorded under `name`; a failure becomes a CallFailure, recorded as
   * an error of `name` and, unless `expected` says it is part of the scenario, as a finding. A write
   * answered WRITE_CONFLICT is retried (up to 5 times) and counted; its latency includes the retries.
   */
  async run<T>(
    name: string,
    call: (client: Clients) => Promise<T>,
    expected: (failure: CallFailure) => boolean = () => false,
    client: Clients = this.client(),
  ): Promise<T> {
    const started = performance.now();
    try {
      const result = await this.withConflictRetries(name, () => call(client));
      const ms = performance.now() - started;
      this.book.record(name, ms);
      const group = groupOf(name);
      if (group) this.book.record(group, ms);
      return result;
    } catch (error) {
      const failure = new CallFailure(
        name,
        Number((error as { code?: number }).code ?? -1),
        reasonOf(error),
        String((error as { details?: string }).details ?? (error as Error).message),
      );
      if (!expected(failure) && !this.aborted) {
        this.book.error(name);
        this.findings.add("unexpected-error", failure.message);
      }
      throw failure;
    }
  }

  private async withConflictRetries<T>(name: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const conflict = (error as { code?: number }).code === 10 && reasonOf(error) === "WRITE_CONFLICT";
        if (!conflict || attempt === 5 || groupOf(name) !== "(all writes)") throw error;
        this.conflicts.set(name, (this.conflicts.get(name) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 10 * attempt));
      }
    }
  }

  close(): void {
    for (const { client } of this.channels) client.close();
  }
}
