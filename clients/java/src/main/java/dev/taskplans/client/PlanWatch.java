package dev.taskplans.client;

import dev.taskplans.v1.PlanChange;
import dev.taskplans.v1.WatchPlanRequest;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A plan's changes, typed, from {@link TaskPlansClient#watch}: iterate it ({@code hasNext()} blocks
 * until the next change), and {@link #close()} it when done (from any thread; the iteration then ends
 * without an error).
 *
 * <pre>{@code
 * try (PlanWatch watch = client.watch("task-1", null, false)) {
 *   while (watch.hasNext()) handle(watch.next());
 * } catch (TaskPlansException e) {
 *   if (e.isWatchHistoryExpired()) ... // read the plan again and watch after its version
 * }
 * }</pre>
 *
 * <p>One thread iterates a watch; {@link #close()} may come from any other.
 *
 * <p>On a retriable error (a replica draining or gone) it reopens the stream after the last version it
 * yielded, with the retry policy's backoff; the failure count starts again after every change. Any
 * other error ends the watch: {@code hasNext()} throws it as a {@link TaskPlansException}, and returns
 * false after that.
 */
public final class PlanWatch implements Iterator<PlanChange>, AutoCloseable {
  private final Supplier<ClientCall<WatchPlanRequest, PlanChange>> calls;
  private final WatchPlanRequest request;
  private final RetryPolicy policy;
  private final BooleanSupplier clientClosed;
  private final Runnable reconnectNow;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final Object lock = new Object();

  private Long after;
  private Stream stream;
  private PlanChange next;
  private boolean done;
  private int failures;
  /** When the first of the failures in a row came (System.nanoTime()), for the policy's max elapsed. */
  private long failingSince;

  PlanWatch(
      Supplier<ClientCall<WatchPlanRequest, PlanChange>> calls,
      WatchPlanRequest request,
      RetryPolicy policy,
      BooleanSupplier clientClosed,
      Runnable reconnectNow) {
    this.calls = calls;
    this.request = request;
    this.policy = policy;
    this.clientClosed = clientClosed;
    this.reconnectNow = reconnectNow;
    this.after = request.hasAfterVersion() ? request.getAfterVersion() : null;
  }

  /** The version of the last change yielded (or the after-version asked for), where a new watch resumes. */
  public OptionalLong lastVersion() {
    synchronized (lock) {
      return after == null ? OptionalLong.empty() : OptionalLong.of(after);
    }
  }

  /**
   * Waits for the next change. False once the watch is closed (or its client is) or the server ended
   * the stream; throws the {@link TaskPlansException} that ended the watch otherwise. An interrupt
   * closes the watch and throws {@code CANCELLED}.
   */
  @Override
  public boolean hasNext() {
    if (next != null) return true;
    while (true) {
      if (done) return false;
      if (isClosed()) return finish();
      Stream current;
      TaskPlansException failure;
      try {
        current = open();
        if (current == null) return finish();
        Object item = current.take();
        if (item instanceof PlanChange change) {
          failures = 0;
          next = change;
          current.requestOne();
          return true;
        }
        Ended end = (Ended) item;
        synchronized (lock) {
          stream = null;
        }
        if (isClosed() || end.status.isOk()) return finish(); // closed, or the server ended it
        failure = TaskPlansException.fromStatus(end.status, end.trailers, end.status.asRuntimeException(end.trailers));
      } catch (InterruptedException e) {
        close();
        done = true;
        Thread.currentThread().interrupt();
        throw TaskPlansException.ofStatus(Status.CANCELLED.withDescription("interrupted while watching"));
      } catch (TaskPlansException e) { // the token provider failed
        failure = e;
      }
      if (failures++ == 0) failingSince = System.nanoTime();
      if (policy == null || failures >= policy.maxAttempts() || !failure.isRetriable()) {
        done = true;
        throw failure;
      }
      Duration delay = policy.delayAfter(failures, failure.retryDelay(), ThreadLocalRandom.current()::nextDouble);
      if (System.nanoTime() + delay.toNanos() - failingSince > policy.maxElapsed().toNanos()) {
        done = true; // reopening would pass the policy's max elapsed, counted from the first failure in a row
        throw failure;
      }
      try {
        if (closed.await(delay.toNanos(), TimeUnit.NANOSECONDS)) return finish();
      } catch (InterruptedException e) {
        close();
        done = true;
        Thread.currentThread().interrupt();
        throw TaskPlansException.ofStatus(Status.CANCELLED.withDescription("interrupted while watching"));
      }
      if (failure.code() == Status.Code.UNAVAILABLE) reconnectNow.run();
    }
  }

  @Override
  public PlanChange next() {
    if (!hasNext()) throw new NoSuchElementException("the watch has ended");
    PlanChange change = next;
    next = null;
    if (change.hasPlan()) {
      synchronized (lock) {
        after = change.getPlan().getVersion();
      }
    }
    return change;
  }

  /** Ends the watch: cancels its stream; {@code hasNext()} then returns false. Safe from any thread. */
  @Override
  public void close() {
    Stream current;
    synchronized (lock) {
      closed.countDown();
      current = stream;
    }
    if (current != null) current.cancel();
  }

  private boolean isClosed() {
    return closed.getCount() == 0 || clientClosed.getAsBoolean();
  }

  private boolean finish() {
    done = true;
    close();
    return false;
  }

  /** The open stream, or a new one after {@code after}; null when the watch was closed meanwhile. */
  private Stream open() {
    synchronized (lock) {
      if (stream != null) return stream;
      if (closed.getCount() == 0) return null;
      WatchPlanRequest.Builder resumed = request.toBuilder().clearAfterVersion();
      if (after != null) resumed.setAfterVersion(after);
      stream = new Stream(calls.get(), resumed.build());
      return stream;
    }
  }

  /** What a stream's listener hands over when the stream ends. */
  private record Ended(Status status, Metadata trailers) {}

  /** One WatchPlan call, read one message at a time. */
  private static final class Stream extends ClientCall.Listener<PlanChange> {
    private final ClientCall<WatchPlanRequest, PlanChange> call;
    private final LinkedBlockingQueue<Object> items = new LinkedBlockingQueue<>();

    Stream(ClientCall<WatchPlanRequest, PlanChange> call, WatchPlanRequest request) {
      this.call = call;
      synchronized (call) {
        call.start(this, new Metadata());
        call.sendMessage(request);
        call.halfClose();
        call.request(1);
      }
    }

    Object take() throws InterruptedException {
      return items.take();
    }

    void requestOne() {
      synchronized (call) {
        call.request(1);
      }
    }

    void cancel() {
      synchronized (call) {
        call.cancel("the watch was closed", null);
      }
    }

    @Override
    public void onMessage(PlanChange message) {
      items.add(message);
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      items.add(new Ended(status, trailers));
    }
  }
}
