package dev.taskplans.client;

import static dev.taskplans.client.FakeServer.fail;
import static dev.taskplans.client.FakeServer.hang;
import static dev.taskplans.client.FakeServer.stream;
import static dev.taskplans.client.FakeServer.watchRequest;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskplans.v1.Plan;
import dev.taskplans.v1.PlanChange;
import dev.taskplans.v1.PlanChangeKind;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** watch(): resumes after the last version on a retriable error, typed errors otherwise, close() ends it. */
class WatchTest {
  private static final RetryPolicy FAST = RetryPolicy.DEFAULT.withInitialBackoff(Duration.ofMillis(10));

  private FakeServer server;
  private TaskPlansClient client;

  @BeforeEach
  void start() throws Exception {
    server = new FakeServer();
    client = TaskPlansClient.builder(server.target()).retryPolicy(FAST).build();
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    server.close();
  }

  private static PlanChange change(PlanChangeKind kind, long version) {
    return PlanChange.newBuilder().setKind(kind).setPlan(Plan.newBuilder().setTaskId("t-1").setVersion(version)).build();
  }

  private static StatusRuntimeException error(Status.Code code, String reason, Map<String, String> metadata) {
    return fail(code, reason, metadata, null).error();
  }

  private static StatusRuntimeException draining() {
    return error(Status.Code.UNAVAILABLE, "WATCH_DRAINING", Map.of());
  }

  @Test
  void itResumesAfterTheLastVersionItYielded() {
    server.script(
        "WatchPlan",
        stream(draining(), change(PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT, 3), change(PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, 4)),
        stream(Status.UNAVAILABLE.asRuntimeException()), // the replica is still down
        hang(change(PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, 5)));
    try (PlanWatch watch = client.watch("t-1", null, true)) {
      assertEquals(3, watch.next().getPlan().getVersion());
      assertEquals(4, watch.next().getPlan().getVersion());
      PlanChange resumed = watch.next();
      assertEquals(PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, resumed.getKind());
      assertEquals(5, resumed.getPlan().getVersion());
      assertEquals(5, watch.lastVersion().getAsLong());
    }
    List<FakeServer.Received> opens = server.received("WatchPlan");
    assertEquals(3, opens.size());
    assertFalse(watchRequest(opens.get(0)).hasAfterVersion());
    assertTrue(watchRequest(opens.get(0)).getIncludeContent());
    assertEquals(4, watchRequest(opens.get(1)).getAfterVersion());
    assertEquals(4, watchRequest(opens.get(2)).getAfterVersion());
    assertTrue(watchRequest(opens.get(2)).getIncludeContent());
    assertNull(opens.get(0).deadlineMillis(), "a watch has no deadline");
  }

  @Test
  void withNothingYieldedItResumesAfterTheCallersVersion() {
    server.script(
        "WatchPlan", stream(draining()), hang(change(PlanChangeKind.PLAN_CHANGE_KIND_DELETED, 9)));
    try (PlanWatch watch = client.watch("t-1", 8L, false)) {
      assertEquals(PlanChangeKind.PLAN_CHANGE_KIND_DELETED, watch.next().getKind());
    }
    List<FakeServer.Received> opens = server.received("WatchPlan");
    assertEquals(8, watchRequest(opens.get(0)).getAfterVersion());
    assertEquals(8, watchRequest(opens.get(1)).getAfterVersion());
  }

  @Test
  void theAttemptCountStartsAgainAfterEveryChange() {
    try (TaskPlansClient two = TaskPlansClient.builder(server.target()).retryPolicy(FAST.withMaxAttempts(2)).build()) {
      for (int v = 1; v <= 4; v++)
        server.script("WatchPlan", stream(draining(), change(PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, v)));
      server.script("WatchPlan", stream(draining()), stream(draining()), stream(draining()));
      PlanWatch watch = two.watch("t-1", 0L, false);
      for (int v = 1; v <= 4; v++) assertEquals(v, watch.next().getPlan().getVersion());
      // The stream of version 4 fails, and so does its reopening, with nothing between them: the
      // policy's two attempts are spent. (Without the reset, the second stream's failure would end it.)
      TaskPlansException e = assertThrows(TaskPlansException.class, watch::hasNext);
      assertEquals("WATCH_DRAINING", e.reason());
      assertFalse(watch.hasNext());
      assertEquals(5, server.received("WatchPlan").size());
    }
  }

  @Test
  void historyExpiredAndTooSlowEndTheWatchAsTypedErrors() {
    server.script(
        "WatchPlan",
        stream(error(Status.Code.OUT_OF_RANGE, "WATCH_HISTORY_EXPIRED", Map.of("after_version", "100"))),
        stream(
            error(Status.Code.RESOURCE_EXHAUSTED, "WATCH_TOO_SLOW", Map.of("resume_after_version", "12")),
            change(PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, 11)));
    PlanWatch expired = client.watch("t-1", 100L, false);
    TaskPlansException e = assertThrows(TaskPlansException.class, expired::hasNext);
    assertEquals(Status.Code.OUT_OF_RANGE, e.code());
    assertTrue(e.isWatchHistoryExpired());
    assertTrue(TaskPlansErrors.isWatchHistoryExpired(e));
    assertEquals("100", e.metadata().get("after_version"));
    assertFalse(expired.hasNext());

    PlanWatch slow = client.watch("t-1", 10L, false);
    assertEquals(11, slow.next().getPlan().getVersion());
    TaskPlansException tooSlow = assertThrows(TaskPlansException.class, slow::hasNext);
    assertTrue(tooSlow.isWatchTooSlow());
    assertEquals(12, tooSlow.resumeAfterVersion().getAsLong());
    assertEquals(2, server.received("WatchPlan").size(), "a typed watch error was retried");
  }

  @Test
  void authAndNotFoundEndItAndRetriesOffEndItAtTheFirstError() {
    server.script(
        "WatchPlan",
        stream(error(Status.Code.NOT_FOUND, "TASK_NOT_FOUND", Map.of())),
        stream(error(Status.Code.UNAUTHENTICATED, "TOKEN_EXPIRED", Map.of())));
    assertTrue(assertThrows(TaskPlansException.class, client.watch("t-1")::hasNext).isNotFound());
    assertTrue(assertThrows(TaskPlansException.class, client.watch("t-1")::hasNext).isAuthError());
    try (TaskPlansClient once = TaskPlansClient.builder(server.target()).noRetry().build()) {
      server.script("WatchPlan", stream(draining()));
      assertEquals("WATCH_DRAINING", assertThrows(TaskPlansException.class, once.watch("t-1")::hasNext).reason());
    }
    assertEquals(3, server.received("WatchPlan").size());
  }

  @Test
  void closeFromAnotherThreadEndsTheIterationWithoutAnErrorAndCancelsTheStream() throws Exception {
    server.script("WatchPlan", hang(change(PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT, 1)));
    PlanWatch watch = client.watch("t-1");
    assertEquals(1, watch.next().getPlan().getVersion());
    CompletableFuture<Boolean> more = CompletableFuture.supplyAsync(watch::hasNext);
    Thread.sleep(200);
    assertFalse(more.isDone(), "hasNext() did not wait for the next change");
    watch.close();
    assertFalse(more.get(5, TimeUnit.SECONDS));
    assertTrue(server.watchCancelled.await(5, TimeUnit.SECONDS), "the server saw no cancel");
    assertFalse(watch.hasNext());
    assertEquals(1, server.received("WatchPlan").size());
  }

  @Test
  void closingTheClientEndsAWatch() throws Exception {
    server.script("WatchPlan", hang());
    PlanWatch watch = client.watch("t-1");
    CompletableFuture<Boolean> more = CompletableFuture.supplyAsync(watch::hasNext);
    Thread.sleep(200);
    client.close();
    assertFalse(more.get(5, TimeUnit.SECONDS));
  }

  @Test
  void theTokenProviderIsAskedAtEveryOpeningAndAnOverrideWins() {
    AtomicInteger asked = new AtomicInteger();
    try (TaskPlansClient provided =
        TaskPlansClient.builder(server.target())
            .retryPolicy(FAST)
            .tokenProvider(() -> "jwt-" + asked.incrementAndGet())
            .build()) {
      server.script(
          "WatchPlan",
          stream(draining(), change(PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT, 1)),
          hang(change(PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, 2)),
          hang(change(PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT, 2)));
      try (PlanWatch watch = provided.watch("t-1")) {
        watch.next();
        watch.next();
      }
      try (PlanWatch watch = provided.withToken("override").watch("t-1")) {
        watch.next();
      }
    }
    assertEquals(2, asked.get());
    assertEquals(
        List.of("Bearer jwt-1", "Bearer jwt-2", "Bearer override"),
        server.received("WatchPlan").stream().map(FakeServer.Received::authorization).toList());
  }
}
