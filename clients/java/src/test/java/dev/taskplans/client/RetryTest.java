package dev.taskplans.client;

import static dev.taskplans.client.FakeServer.bare;
import static dev.taskplans.client.FakeServer.fail;
import static dev.taskplans.client.FakeServer.reply;
import static dev.taskplans.client.FakeServer.stall;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskplans.v1.DiffPlanRevisionsRequest;
import dev.taskplans.v1.DiffPlanRevisionsResponse;
import dev.taskplans.v1.EditPlanRequest;
import dev.taskplans.v1.GetPlanChangesRequest;
import dev.taskplans.v1.GetPlanChangesResponse;
import dev.taskplans.v1.GetPlanRequest;
import dev.taskplans.v1.MergeMarker;
import dev.taskplans.v1.PlanDiff;
import dev.taskplans.v1.GetPlanResponse;
import dev.taskplans.v1.Plan;
import dev.taskplans.v1.SavePlanRequest;
import dev.taskplans.v1.UpdatePlanRequest;
import dev.taskplans.v1.WritePlanResponse;
import dev.taskplans.v1.WriteMode;
import io.grpc.Deadline;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which calls and errors are retried, how long between attempts, and the bounds (clients/SDK.md). */
class RetryTest {
  private static final GetPlanRequest READ = GetPlanRequest.newBuilder().setTaskId("t-1").build();
  private static final GetPlanResponse PLAN =
      GetPlanResponse.newBuilder().setPlan(Plan.newBuilder().setTaskId("t-1").setVersion(7)).build();
  private static final UpdatePlanRequest APPEND =
      UpdatePlanRequest.newBuilder().setTaskId("t-1").setMode(WriteMode.WRITE_MODE_APPEND).setContent("x").build();
  private static final WritePlanResponse WRITTEN =
      WritePlanResponse.newBuilder().setPlan(Plan.newBuilder().setVersion(8)).build();
  // Short delays, so the tests are quick; no jitter, so they are exact.
  private static final RetryPolicy FAST =
      RetryPolicy.DEFAULT.withInitialBackoff(Duration.ofMillis(20)).withJitter(0);

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

  private List<Long> gapsMillis(String method) {
    List<FakeServer.Received> calls = server.received(method);
    return java.util.stream.IntStream.range(1, calls.size())
        .mapToObj(i -> TimeUnit.NANOSECONDS.toMillis(calls.get(i).atNanos() - calls.get(i - 1).atNanos()))
        .toList();
  }

  @Test
  void aReadIsRetriedOnUnavailableOfAnyReasonOrNone() {
    server.script(
        "GetPlan",
        bare(Status.UNAVAILABLE.withDescription("connection reset")),
        fail(Status.Code.UNAVAILABLE, "STORAGE_UNAVAILABLE"),
        fail(Status.Code.UNAVAILABLE, "LOCK_UNAVAILABLE"),
        reply(PLAN));
    assertEquals(7, client.getPlan(READ).getPlan().getVersion());
    assertEquals(4, server.received("GetPlan").size());
    // Backoff 20, 40, 80 ms (multiplier 2, no jitter).
    List<Long> gaps = gapsMillis("GetPlan");
    assertTrue(gaps.get(0) >= 20 && gaps.get(1) >= 40 && gaps.get(2) >= 80, gaps.toString());
  }

  @Test
  void rateLimitedIsRetriedNoSoonerThanItsRetryInfoSays() {
    server.script(
        "GetPlan",
        fail(Status.Code.RESOURCE_EXHAUSTED, "RATE_LIMITED", Map.of("next_action", "Wait."), Duration.ofMillis(400)),
        reply(PLAN));
    assertEquals(7, client.getPlan(READ).getPlan().getVersion());
    assertEquals(2, server.received("GetPlan").size());
    long gap = gapsMillis("GetPlan").get(0);
    assertTrue(gap >= 400, "the retry came " + gap + " ms after, before RetryInfo's 400 ms");
  }

  @Test
  void aWriteBudgetRefusalIsRetriedNoSoonerThanItsRetryInfoSays() {
    server.script(
        "GetPlan",
        fail(
            Status.Code.RESOURCE_EXHAUSTED,
            "WRITE_BUDGET_EXCEEDED",
            Map.of("next_action", "Wait."),
            Duration.ofMillis(400)),
        reply(PLAN));
    assertEquals(7, client.getPlan(READ).getPlan().getVersion());
    assertEquals(2, server.received("GetPlan").size());
    long gap = gapsMillis("GetPlan").get(0);
    assertTrue(gap >= 400, "the retry came " + gap + " ms after, before RetryInfo's 400 ms");
  }

  @Test
  void anExpensiveCallsRefusalIsRetriedNoSoonerThanItsRetryInfoSays() {
    server.script(
        "DiffPlanRevisions",
        fail(
            Status.Code.RESOURCE_EXHAUSTED,
            "EXPENSIVE_CALLS_LIMITED",
            Map.of("next_action", "Wait."),
            Duration.ofMillis(400)),
        reply(DiffPlanRevisionsResponse.getDefaultInstance()));
    client.diffPlanRevisions(DiffPlanRevisionsRequest.getDefaultInstance());
    assertEquals(2, server.received("DiffPlanRevisions").size());
    long gap = gapsMillis("DiffPlanRevisions").get(0);
    assertTrue(gap >= 400, "the retry came " + gap + " ms after, before RetryInfo's 400 ms");
  }

  @Test
  void aWriteConflictIsRetriedWithTheSameRequestIdTheClientSet() {
    server.script(
        "UpdatePlan",
        fail(Status.Code.ABORTED, "WRITE_CONFLICT"),
        bare(Status.UNAVAILABLE),
        reply(WRITTEN));
    assertEquals(8, client.updatePlan(APPEND).getPlan().getVersion());
    Set<String> ids =
        server.received("UpdatePlan").stream()
            .map(r -> ((UpdatePlanRequest) r.request()).getRequestId())
            .collect(Collectors.toSet());
    assertEquals(1, ids.size(), "one request_id for every attempt: " + ids);
    assertTrue(ids.iterator().next().matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
    assertEquals(3, server.received("UpdatePlan").size());
  }

  @Test
  void aCallersRequestIdIsKeptAndEachLogicalCallGetsItsOwn() {
    server.script("UpdatePlan", bare(Status.UNAVAILABLE), reply(WRITTEN), reply(WRITTEN), reply(WRITTEN));
    client.updatePlan(APPEND.toBuilder().setRequestId("mine").build());
    client.updatePlan(APPEND);
    client.updatePlan(APPEND);
    List<String> ids =
        server.received("UpdatePlan").stream().map(r -> ((UpdatePlanRequest) r.request()).getRequestId()).toList();
    assertEquals("mine", ids.get(0));
    assertEquals("mine", ids.get(1));
    assertFalse(ids.get(2).equals(ids.get(3)), "two logical calls share a request_id: " + ids);
  }

  @Test
  void definiteRejectionsAreNotRetried() {
    server.script(
        "UpdatePlan",
        fail(Status.Code.ABORTED, "VERSION_MISMATCH"),
        fail(Status.Code.ABORTED, "REVISION_CHANGED"),
        reply(WRITTEN));
    server.script(
        "GetPlan",
        fail(Status.Code.RESOURCE_EXHAUSTED, "HISTORY_QUOTA_EXCEEDED"),
        fail(Status.Code.NOT_FOUND, "PLAN_NOT_FOUND"),
        bare(Status.CANCELLED),
        fail(Status.Code.UNAUTHENTICATED, "TOKEN_EXPIRED"),
        reply(PLAN));
    TaskPlansException mismatch = assertThrows(TaskPlansException.class, () -> client.updatePlan(APPEND));
    assertEquals(Status.Code.ABORTED, mismatch.code());
    assertEquals("VERSION_MISMATCH", mismatch.reason());
    assertTrue(mismatch.isVersionMismatch());
    assertFalse(mismatch.isRetriable());
    assertTrue(assertThrows(TaskPlansException.class, () -> client.updatePlan(APPEND)).isVersionMismatch());
    assertEquals(2, server.received("UpdatePlan").size());
    assertTrue(assertThrows(TaskPlansException.class, () -> client.getPlan(READ)).isRateLimited());
    assertTrue(assertThrows(TaskPlansException.class, () -> client.getPlan(READ)).isNotFound());
    assertEquals(Status.Code.CANCELLED, assertThrows(TaskPlansException.class, () -> client.getPlan(READ)).code());
    assertTrue(assertThrows(TaskPlansException.class, () -> client.getPlan(READ)).isAuthError());
    assertEquals(4, server.received("GetPlan").size());
  }

  @Test
  void planChangesAndRevisionDiffsAreRetriedAsReads() {
    server.script(
        "GetPlanChanges",
        bare(Status.UNAVAILABLE),
        reply(
            GetPlanChangesResponse.newBuilder()
                .setPlan(Plan.newBuilder().setVersion(3))
                .setSinceVersion(1)
                .setDiff(PlanDiff.newBuilder().setDiffBytes(40))
                .build()));
    server.script(
        "DiffPlanRevisions",
        fail(Status.Code.ABORTED, "WRITE_CONFLICT"),
        reply(DiffPlanRevisionsResponse.newBuilder().setDiff(PlanDiff.newBuilder().setLinesAdded(1)).build()));
    GetPlanChangesResponse changes =
        client.getPlanChanges(GetPlanChangesRequest.newBuilder().setTaskId("t-1").setSinceVersion(1).build());
    assertEquals(3, changes.getPlan().getVersion());
    assertEquals(40, changes.getDiff().getDiffBytes());
    DiffPlanRevisionsResponse diff =
        client.diffPlanRevisions(
            DiffPlanRevisionsRequest.newBuilder().setTaskId("t-1").setFromRevisionId("a").setToRevisionId("b").build());
    assertEquals(1, diff.getDiff().getLinesAdded());
    assertEquals(2, server.received("GetPlanChanges").size());
    assertEquals(2, server.received("DiffPlanRevisions").size());
  }

  @Test
  void aMergedEditKeepsOneRequestIdAndItsMergeFlagOnEveryAttempt() {
    server.script(
        "EditPlan",
        bare(Status.UNAVAILABLE),
        reply(
            WRITTEN.toBuilder()
                .setMerge(MergeMarker.newBuilder().setFromVersion(2).setToVersion(4))
                .build()));
    EditPlanRequest edit =
        EditPlanRequest.newBuilder()
            .setTaskId("t-1")
            .setExpectedVersion(2)
            .setOldText("a")
            .setNewText("b")
            .setMerge(true)
            .build();
    WritePlanResponse written = client.editPlan(edit);
    assertEquals(4, written.getMerge().getToVersion());
    List<EditPlanRequest> attempts =
        server.received("EditPlan").stream().map(r -> (EditPlanRequest) r.request()).toList();
    assertEquals(2, attempts.size());
    assertEquals(attempts.get(0), attempts.get(1));
    assertTrue(attempts.get(0).getMerge() && !attempts.get(0).getRequestId().isEmpty());
  }

  @Test
  void mergeAndHistoryRefusalsAreNotRetried() {
    server.script(
        "UpdatePlan",
        fail(Status.Code.ABORTED, "MERGE_CONFLICT"),
        fail(Status.Code.INVALID_ARGUMENT, "MERGE_NOT_APPLICABLE"),
        reply(WRITTEN));
    server.script("GetPlanChanges", fail(Status.Code.OUT_OF_RANGE, "HISTORY_UNAVAILABLE"), reply(PLAN));
    UpdatePlanRequest merge = APPEND.toBuilder().setMode(WriteMode.WRITE_MODE_REPLACE).setMerge(true).build();
    assertTrue(assertThrows(TaskPlansException.class, () -> client.updatePlan(merge)).isMergeConflict());
    assertTrue(assertThrows(TaskPlansException.class, () -> client.updatePlan(merge)).isInvalidArgument());
    assertEquals(2, server.received("UpdatePlan").size());
    GetPlanChangesRequest changes = GetPlanChangesRequest.newBuilder().setTaskId("t-1").setSinceVersion(1).build();
    assertTrue(assertThrows(TaskPlansException.class, () -> client.getPlanChanges(changes)).isHistoryUnavailable());
    assertEquals(1, server.received("GetPlanChanges").size());
  }

  @Test
  void writesWithoutARequestIdAreNotRetried() {
    server.script("SavePlan", bare(Status.UNAVAILABLE), reply(WRITTEN));
    SavePlanRequest save = SavePlanRequest.newBuilder().setTaskId("t-1").setContent("# x\n").build();
    assertEquals(Status.Code.UNAVAILABLE, assertThrows(TaskPlansException.class, () -> client.savePlan(save)).code());
    assertEquals(1, server.received("SavePlan").size());
  }

  @Test
  void attemptsAreBoundedAndTheLastErrorIsThrown() {
    for (int i = 1; i <= 8; i++) server.script("GetPlan", fail(Status.Code.UNAVAILABLE, "STORAGE_UNAVAILABLE_" + i));
    TaskPlansException last = assertThrows(TaskPlansException.class, () -> client.getPlan(READ));
    assertEquals(7, server.received("GetPlan").size());
    assertEquals("STORAGE_UNAVAILABLE_7", last.reason());

    try (TaskPlansClient three =
        TaskPlansClient.builder(server.target()).retryPolicy(FAST.withMaxAttempts(3)).build()) {
      for (int i = 0; i < 3; i++) server.script("GetTask", bare(Status.UNAVAILABLE));
      assertThrows(
          TaskPlansException.class,
          () -> three.getTask(dev.taskplans.v1.GetTaskRequest.newBuilder().setTaskId("t-1").build()));
      assertEquals(3, server.received("GetTask").size());
    }
  }

  @Test
  void noRetryWhenADelayWouldPassMaxElapsed() {
    try (TaskPlansClient bounded =
        TaskPlansClient.builder(server.target()).retryPolicy(FAST.withMaxElapsed(Duration.ofMillis(300))).build()) {
      server.script("GetPlan", fail(Status.Code.RESOURCE_EXHAUSTED, "RATE_LIMITED", Map.of(), Duration.ofSeconds(2)));
      server.script("GetPlan", reply(PLAN));
      long started = System.nanoTime();
      TaskPlansException e = assertThrows(TaskPlansException.class, () -> bounded.getPlan(READ));
      assertEquals(Duration.ofSeconds(2), e.retryDelay().orElseThrow());
      assertEquals(1, server.received("GetPlan").size());
      assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(1500), "it slept the delay anyway");
    }
  }

  @Test
  void noRetryPastTheDeadlineWhichCoversEveryAttempt() {
    try (TaskPlansClient bounded =
        TaskPlansClient.builder(server.target())
            .retryPolicy(FAST)
            .defaultTimeout(Duration.ofMillis(500))
            .build()) {
      server.script("GetPlan", fail(Status.Code.UNAVAILABLE, "LOCK_UNAVAILABLE", Map.of(), Duration.ofSeconds(1)));
      long started = System.nanoTime();
      assertEquals("LOCK_UNAVAILABLE", assertThrows(TaskPlansException.class, () -> bounded.getPlan(READ)).reason());
      assertEquals(1, server.received("GetPlan").size());
      assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(900));

      // Attempts that each take 200 ms under a 500 ms deadline: the third one is cut by the deadline.
      server.script(
          "GetTask",
          stall(Duration.ofMillis(200), bare(Status.UNAVAILABLE)),
          stall(Duration.ofMillis(200), bare(Status.UNAVAILABLE)),
          stall(Duration.ofMillis(200), bare(Status.UNAVAILABLE)),
          stall(Duration.ofMillis(200), bare(Status.UNAVAILABLE)));
      TaskPlansException e =
          assertThrows(
              TaskPlansException.class,
              () -> bounded.getTask(dev.taskplans.v1.GetTaskRequest.newBuilder().setTaskId("t-1").build()));
      assertTrue(server.received("GetTask").size() <= 3, "attempts: " + server.received("GetTask").size());
      assertTrue(
          e.code() == Status.Code.DEADLINE_EXCEEDED || e.code() == Status.Code.UNAVAILABLE, e.toString());
    }
  }

  @Test
  void retriesCanBeTurnedOff() {
    try (TaskPlansClient once = TaskPlansClient.builder(server.target()).noRetry().build()) {
      server.script("GetPlan", bare(Status.UNAVAILABLE), reply(PLAN));
      server.script("UpdatePlan", fail(Status.Code.ABORTED, "WRITE_CONFLICT"), reply(WRITTEN));
      assertThrows(TaskPlansException.class, () -> once.getPlan(READ));
      assertTrue(assertThrows(TaskPlansException.class, () -> once.updatePlan(APPEND)).isRetriable());
      assertEquals(1, server.received("GetPlan").size());
      assertEquals(1, server.received("UpdatePlan").size());
      // The write goes as the caller built it: no request_id added (as in every language).
      assertTrue(((UpdatePlanRequest) server.received("UpdatePlan").get(0).request()).getRequestId().isEmpty());
    }
  }

  @Test
  void everyUnaryCallHasADeadlineByDefaultAndACallMayGiveItsOwn() {
    server.script("GetPlan", reply(PLAN), reply(PLAN), reply(PLAN));
    client.getPlan(READ);
    client.withTimeout(Duration.ofSeconds(2)).getPlan(READ);
    client.withTimeout(Duration.ZERO).getPlan(READ);
    List<FakeServer.Received> calls = server.received("GetPlan");
    assertNotNull(calls.get(0).deadlineMillis());
    assertTrue(calls.get(0).deadlineMillis() > 25_000 && calls.get(0).deadlineMillis() <= 30_000);
    assertTrue(calls.get(1).deadlineMillis() > 1_000 && calls.get(1).deadlineMillis() <= 2_000);
    assertEquals(null, calls.get(2).deadlineMillis());
  }

  @Test
  void aDeadlineExceededIsRaisedByTheClientLibraryAndNotRetried() {
    server.script("GetPlan", stall(Duration.ofMillis(600), reply(PLAN)), reply(PLAN));
    TaskPlansException e =
        assertThrows(TaskPlansException.class, () -> client.withTimeout(Duration.ofMillis(200)).getPlan(READ));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
    assertEquals("", e.reason());
    assertTrue(e.errorInfo().isEmpty());
    assertEquals(1, server.received("GetPlan").size());

    TaskPlansException past =
        assertThrows(
            TaskPlansException.class,
            () -> client.withDeadline(Deadline.after(-1, TimeUnit.MILLISECONDS)).getPlan(READ));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, past.code());
    assertEquals(1, server.received("GetPlan").size(), "a call past its deadline was sent");
  }
}
