import type { ClientReadableStream, Metadata } from "@grpc/grpc-js";
import type { PlanChange } from "@taskplans/contract";
import { isRetriable, isServiceError, TaskPlansError } from "./errors";
import { type RetryPolicy, retryDelayMs, sleep } from "./retry";

/** What `plans.watch` watches. */
export interface WatchOptions {
  /** Start after this version (no snapshot); without it the first change is a SNAPSHOT. */
  readonly afterVersion?: number;
  /** Send each change's plan with its content. */
  readonly includeContent?: boolean;
  /** Ends the watch, as `cancel()` does. */
  readonly signal?: AbortSignal;
  /** This watch's bearer token: wins over the client's token or provider (which is then not called). */
  readonly token?: string;
  /** Extra request metadata (an `authorization` entry here wins over the client's token or provider). */
  readonly metadata?: Metadata;
}

/** A watch that resumes: `for await (const change of watch)`, ended by `cancel()` or `break`. */
export interface PlanWatch extends AsyncIterable<PlanChange> {
  /** Ends the watch; the iteration then finishes without an error. */
  cancel(): void;
}

/** Opens one WatchPlan stream after `afterVersion` (undefined: from a snapshot). */
export type OpenWatch = (afterVersion: number | undefined) => Promise<ClientReadableStream<PlanChange>>;

/**
 * A watch over `open` that reopens the stream after the last version it yielded when the stream
 * fails with an error the policy retries (a replica draining or gone), with the policy's backoff;
 * the failure count (and the max elapsed time, from the first failure in a row) starts again after
 * every change received. Any other error (WATCH_HISTORY_EXPIRED,
 * WATCH_TOO_SLOW, TASK_NOT_FOUND, auth) ends the iteration as a TaskPlansError.
 */
export function resumingWatch(
  open: OpenWatch,
  options: WatchOptions,
  policy: Required<RetryPolicy> | null,
  closed?: AbortSignal,
): PlanWatch {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  // The caller's signal and the client's close() both end it.
  const signals = [options.signal, closed].filter((signal) => signal !== undefined);
  for (const signal of signals)
    if (signal.aborted) stop.abort();
    else signal.addEventListener("abort", onAbort, { once: true });
  let current: ClientReadableStream<PlanChange> | null = null;
  stop.signal.addEventListener("abort", () => current?.cancel(), { once: true });

  async function* changes(): AsyncGenerator<PlanChange> {
    let after = options.afterVersion;
    let failures = 0;
    let failingSince = 0; // when the first of the failures in a row came
    try {
      while (!stop.signal.aborted) {
        try {
          current = await open(after);
          if (stop.signal.aborted) return;
          for await (const change of current as AsyncIterable<PlanChange>) {
            failures = 0;
            failingSince = 0;
            if (change.plan) after = change.plan.version;
            yield change;
          }
          return; // the server ended the stream (the task is gone)
        } catch (error) {
          if (stop.signal.aborted) return;
          const failure = isServiceError(error) ? TaskPlansError.from(error) : error;
          failures++;
          failingSince ||= Date.now();
          if (!policy || failures >= policy.maxAttempts || !isRetriable(failure)) throw failure;
          const delay = retryDelayMs(policy, failures, failure as TaskPlansError);
          if (Date.now() + delay - failingSince > policy.maxElapsedMs) throw failure;
          await sleep(delay, stop.signal);
        }
      }
    } finally {
      current?.cancel();
      for (const signal of signals) signal.removeEventListener("abort", onAbort);
    }
  }

  const iterator = changes();
  return {
    [Symbol.asyncIterator]: () => iterator,
    cancel: () => stop.abort(),
  };
}
