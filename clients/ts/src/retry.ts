import { isRetriable, type TaskPlansError } from "./errors";

/** How safe calls are retried (clients/SDK.md). Every field has the default shown. */
export interface RetryPolicy {
  /** Attempts in all, the first included: 7 (backoffs of 0.1 to 3.2 s, 6.3 s in all: a database restart). */
  readonly maxAttempts?: number;
  /** Delay before the second attempt: 100 ms. */
  readonly initialBackoffMs?: number;
  /** Longest delay: 5 s. */
  readonly maxBackoffMs?: number;
  /** Each delay is this many times the last: 2. */
  readonly multiplier?: number;
  /** Each delay is multiplied by a random factor in [1 - jitter, 1 + jitter]: 0.2. */
  readonly jitter?: number;
  /** No attempt starts later than this after the first: 30 s (and never past the call's deadline). */
  readonly maxElapsedMs?: number;
}

export const DEFAULT_RETRY_POLICY: Required<RetryPolicy> = {
  maxAttempts: 7,
  initialBackoffMs: 100,
  maxBackoffMs: 5_000,
  multiplier: 2,
  jitter: 0.2,
  maxElapsedMs: 30_000,
};

/** The delay before the attempt after `failures` failed ones: backoff with jitter, at least RetryInfo's. */
export function retryDelayMs(
  policy: Required<RetryPolicy>,
  failures: number,
  error: TaskPlansError,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * policy.multiplier ** (failures - 1));
  const jittered = base * (1 - policy.jitter + 2 * policy.jitter * random());
  return Math.max(jittered, error.retryDelayMs ?? 0);
}

/** Sleeps `ms`, or less when `signal` aborts first (then resolves false). */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails with an error the policy does not retry, or the attempts,
 * the elapsed time or the deadline (ms since the epoch, or undefined) run out; then throws the last
 * error. Without a policy, one attempt.
 */
export async function withRetries<T>(
  policy: Required<RetryPolicy> | null,
  deadline: number | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  for (let failures = 1; ; failures++) {
    try {
      return await attempt();
    } catch (error) {
      if (!policy || failures >= policy.maxAttempts || !isRetriable(error)) throw error;
      const delay = retryDelayMs(policy, failures, error as TaskPlansError);
      const next = Date.now() + delay;
      if (next - started > policy.maxElapsedMs || (deadline !== undefined && next >= deadline)) throw error;
      await sleep(delay);
    }
  }
}
