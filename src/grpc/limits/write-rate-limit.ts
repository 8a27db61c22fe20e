import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/** Admits or refuses one write of a caller; resolves the wait in ms when refused, null when admitted. */
export interface WriteRateLimit {
  admit(callerKey: string): Promise<number | null>;
  /** The limit as configured, for messages. */
  readonly writes: number;
  readonly windowMs: number;
}

/**
 * At most `writes` writes per caller in every `windowMs` window, counted in this process (with N
 * replicas a caller may reach up to N times the limit). `writes` 0 admits everything.
 */
export function writeRateLimit(writes: number, windowMs: number): WriteRateLimit {
  if (writes === 0) return { writes, windowMs, admit: async () => null };
  const limiter = new RateLimiterMemory({ points: writes, duration: windowMs / 1000 });
  return {
    writes,
    windowMs,
    async admit(callerKey) {
      try {
        await limiter.consume(callerKey);
        return null;
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return Math.max(1, Math.ceil(refusal.msBeforeNext));
        throw refusal;
      }
    },
  };
}
