package dev.taskplans.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.DoubleSupplier;

/**
 * How the client retries safe calls (clients/SDK.md): the reads, and the writes that carry a
 * {@code request_id}, on {@code UNAVAILABLE}, {@code RESOURCE_EXHAUSTED RATE_LIMITED},
 * {@code WRITE_BUDGET_EXCEEDED} or {@code EXPENSIVE_CALLS_LIMITED} and {@code ABORTED WRITE_CONFLICT}. {@link #DEFAULT} is on unless the client is built with
 * {@code noRetry()}; change one field with the {@code with...} methods:
 *
 * <pre>{@code
 * RetryPolicy.DEFAULT.withMaxAttempts(3).withMaxElapsed(Duration.ofSeconds(5))
 * }</pre>
 *
 * @param maxAttempts attempts in all, the first included (7: backoffs of 0.1 to 3.2 s, 6.3 s in all,
 *     long enough to ride out a database restart); 1 means no retry
 * @param initialBackoff the delay before the second attempt (100 ms)
 * @param maxBackoff the longest delay (5 s)
 * @param multiplier each delay is this many times the one before (2)
 * @param jitter each delay is multiplied by a random factor in {@code [1 - jitter, 1 + jitter]} (0.2)
 * @param maxElapsed no attempt starts later than this after the first (30 s), and never past the
 *     call's deadline; {@link Duration#ZERO} bounds a call by its deadline only
 */
public record RetryPolicy(
    int maxAttempts,
    Duration initialBackoff,
    Duration maxBackoff,
    double multiplier,
    double jitter,
    Duration maxElapsed) {

  /** The defaults of clients/SDK.md. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(7, Duration.ofMillis(100), Duration.ofSeconds(5), 2, 0.2, Duration.ofSeconds(30));

  public RetryPolicy {
    Objects.requireNonNull(initialBackoff, "initialBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    Objects.requireNonNull(maxElapsed, "maxElapsed");
    if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be at least 1");
    if (initialBackoff.isNegative() || maxBackoff.isNegative() || maxElapsed.isNegative())
      throw new IllegalArgumentException("backoffs and maxElapsed must not be negative");
    if (!(multiplier >= 1)) throw new IllegalArgumentException("multiplier must be at least 1");
    if (!(jitter >= 0 && jitter < 1)) throw new IllegalArgumentException("jitter must be in [0, 1)");
  }

  public RetryPolicy withMaxAttempts(int value) {
    return new RetryPolicy(value, initialBackoff, maxBackoff, multiplier, jitter, maxElapsed);
  }

  public RetryPolicy withInitialBackoff(Duration value) {
    return new RetryPolicy(maxAttempts, value, maxBackoff, multiplier, jitter, maxElapsed);
  }

  public RetryPolicy withMaxBackoff(Duration value) {
    return new RetryPolicy(maxAttempts, initialBackoff, value, multiplier, jitter, maxElapsed);
  }

  public RetryPolicy withMultiplier(double value) {
    return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, value, jitter, maxElapsed);
  }

  public RetryPolicy withJitter(double value) {
    return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, multiplier, value, maxElapsed);
  }

  public RetryPolicy withMaxElapsed(Duration value) {
    return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, value);
  }

  /**
   * The delay before the attempt after {@code failures} failed ones:
   * {@code min(maxBackoff, initialBackoff * multiplier^(failures - 1))} times the jitter factor, and
   * at least {@code retryInfo} (the error's {@code google.rpc.RetryInfo} delay) when present.
   *
   * @param random a source of numbers in [0, 1)
   */
  public Duration delayAfter(int failures, Optional<Duration> retryInfo, DoubleSupplier random) {
    double base =
        Math.min(
            (double) maxBackoff.toNanos(),
            initialBackoff.toNanos() * Math.pow(multiplier, Math.max(0, failures - 1)));
    double factor = 1 - jitter + 2 * jitter * random.getAsDouble();
    Duration delay = Duration.ofNanos((long) (base * factor));
    return retryInfo.filter(floor -> floor.compareTo(delay) > 0).orElse(delay);
  }
}
