package dev.taskplans.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** The typed error's fields and the helpers by reason group. */
class ErrorsTest {
  private static TaskPlansException typed(Status.Code code, String reason) {
    return typed(code, reason, Map.of());
  }

  private static TaskPlansException typed(Status.Code code, String reason, Map<String, String> metadata) {
    return TaskPlansException.of(FakeServer.fail(code, reason, metadata, null).error()).orElseThrow();
  }

  private static String key(TaskPlansException e) {
    return e.code() + " " + e.reason();
  }

  @Test
  void everyFieldOfTheRichErrorModel() {
    TaskPlansException e =
        TaskPlansException.of(
                FakeServer.fail(
                        Status.Code.INVALID_ARGUMENT,
                        "INVALID_FIELD",
                        Map.of("field", "task_id", "next_action", "Correct task_id and retry.", "request_id", "r-1"),
                        Duration.ofMillis(1500),
                        "task_id",
                        "is required")
                    .error())
            .orElseThrow();
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals("INVALID_ARGUMENT", e.code().name());
    assertEquals("INVALID_FIELD", e.reason());
    assertEquals("taskplans", e.errorInfo().orElseThrow().getDomain());
    assertEquals("task_id", e.metadata().get("field"));
    assertEquals("r-1", e.metadata().get("request_id"));
    assertEquals("Correct task_id and retry.", e.nextAction());
    assertEquals(List.of(new FieldViolation("task_id", "is required")), e.fieldViolations());
    assertEquals(Optional.of(Duration.ofMillis(1500)), e.retryDelay());
    assertEquals("INVALID_ARGUMENT INVALID_FIELD happened.", e.getMessage());
    assertTrue(e.isInvalidArgument());
  }

  @Test
  void anErrorWithoutErrorInfoHasNoReason() {
    TaskPlansException e =
        TaskPlansException.of(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after 1s").asRuntimeException())
            .orElseThrow();
    assertEquals("", e.reason());
    assertEquals("", e.nextAction());
    assertEquals(Map.of(), e.metadata());
    assertEquals(List.of(), e.fieldViolations());
    assertEquals(Optional.empty(), e.retryDelay());
    assertFalse(e.isRetriable());
  }

  @Test
  void theHelpersByReasonGroup() {
    Map<Predicate<Throwable>, List<TaskPlansException>> trueFor =
        new HashMap<>(Map.of(
            TaskPlansErrors::isVersionMismatch,
                List.of(typed(Status.Code.ABORTED, "VERSION_MISMATCH"), typed(Status.Code.ABORTED, "REVISION_CHANGED")),
            TaskPlansErrors::isNotFound,
                List.of(
                    typed(Status.Code.NOT_FOUND, "PLAN_NOT_FOUND"),
                    typed(Status.Code.NOT_FOUND, "TASK_NOT_FOUND"),
                    typed(Status.Code.NOT_FOUND, "REVISION_NOT_FOUND")),
            TaskPlansErrors::isAlreadyExists,
                List.of(typed(Status.Code.ALREADY_EXISTS, "TASK_EXISTS"), typed(Status.Code.ALREADY_EXISTS, "PLAN_EXISTS")),
            TaskPlansErrors::isAuthError,
                List.of(
                    typed(Status.Code.UNAUTHENTICATED, "TOKEN_EXPIRED"),
                    typed(Status.Code.UNAUTHENTICATED, null),
                    typed(Status.Code.PERMISSION_DENIED, "TASK_NOT_REACHABLE")),
            TaskPlansErrors::isInvalidArgument, List.of(typed(Status.Code.INVALID_ARGUMENT, "FRAGMENT_BLANK")),
            TaskPlansErrors::isPreconditionFailed, List.of(typed(Status.Code.FAILED_PRECONDITION, "PLAN_TOO_LARGE")),
            TaskPlansErrors::isRateLimited,
                List.of(
                    typed(Status.Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"),
                    typed(Status.Code.RESOURCE_EXHAUSTED, "WRITE_BUDGET_EXCEEDED"),
                    typed(Status.Code.RESOURCE_EXHAUSTED, "HISTORY_QUOTA_EXCEEDED")),
            TaskPlansErrors::isRetriable,
                List.of(
                    typed(Status.Code.UNAVAILABLE, null),
                    typed(Status.Code.UNAVAILABLE, "WATCH_DRAINING"),
                    typed(Status.Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"),
                    typed(Status.Code.RESOURCE_EXHAUSTED, "WRITE_BUDGET_EXCEEDED"),
                    typed(Status.Code.ABORTED, "WRITE_CONFLICT")),
            TaskPlansErrors::isWatchHistoryExpired, List.of(typed(Status.Code.OUT_OF_RANGE, "WATCH_HISTORY_EXPIRED")),
            TaskPlansErrors::isWatchTooSlow, List.of(typed(Status.Code.RESOURCE_EXHAUSTED, "WATCH_TOO_SLOW"))));
    trueFor.put(TaskPlansErrors::isHistoryUnavailable, List.of(typed(Status.Code.OUT_OF_RANGE, "HISTORY_UNAVAILABLE")));
    trueFor.put(TaskPlansErrors::isMergeConflict, List.of(typed(Status.Code.ABORTED, "MERGE_CONFLICT")));
    List<TaskPlansException> all = trueFor.values().stream().flatMap(List::stream).toList();
    for (Map.Entry<Predicate<Throwable>, List<TaskPlansException>> helper : trueFor.entrySet()) {
      List<String> expected = helper.getValue().stream().map(ErrorsTest::key).toList();
      for (TaskPlansException e : all) {
        assertEquals(expected.contains(key(e)), helper.getKey().test(e), e + " for " + expected);
      }
      // False for anything that is not a failed call.
      assertFalse(helper.getKey().test(new IllegalStateException("not a call")));
      assertFalse(helper.getKey().test(null));
    }
    // Not retried: the definite rejections and the client's own endings.
    for (TaskPlansException e :
        List.of(
            typed(Status.Code.ABORTED, "VERSION_MISMATCH"),
            typed(Status.Code.RESOURCE_EXHAUSTED, "WATCH_TOO_SLOW"),
            typed(Status.Code.DEADLINE_EXCEEDED, null),
            typed(Status.Code.CANCELLED, null)))
      assertFalse(e.isRetriable(), e.toString());
  }

  @Test
  void theMetadataOfAMergeConflictAndOfUnavailableHistoryIsTyped() {
    String conflicts = "@@ base lines 3-3 @@\n<<<<<<< yours\n- b\n||||||| base\n- a\n=======\n- c\n>>>>>>> current\n";
    TaskPlansException conflict =
        typed(
            Status.Code.ABORTED,
            "MERGE_CONFLICT",
            Map.of("base_version", "4", "current_version", "6", "conflict_regions", "1", "conflicts", conflicts));
    assertEquals(Optional.of(new MergeConflict(4, 6, 1, conflicts)), conflict.mergeConflict());
    assertEquals(Optional.empty(), conflict.historyUnavailable());
    TaskPlansException read =
        typed(
            Status.Code.OUT_OF_RANGE,
            "HISTORY_UNAVAILABLE",
            Map.of("since_version", "2", "current_version", "9", "oldest_version", "5"));
    assertEquals(Optional.of(new HistoryUnavailable(2, 9, OptionalLong.of(5))), read.historyUnavailable());
    assertEquals(Optional.empty(), read.mergeConflict());
    TaskPlansException merge =
        typed(Status.Code.OUT_OF_RANGE, "HISTORY_UNAVAILABLE", Map.of("expected_version", "2", "current_version", "9"));
    assertEquals(Optional.of(new HistoryUnavailable(2, 9, OptionalLong.empty())), merge.historyUnavailable());
    assertTrue(typed(Status.Code.INVALID_ARGUMENT, "MERGE_NOT_APPLICABLE").isInvalidArgument());
  }

  @Test
  void aGrpcErrorWrappedInAnotherIsStillRecognised() {
    RuntimeException wrapped =
        new RuntimeException("outer", FakeServer.fail(Status.Code.ABORTED, "VERSION_MISMATCH").error());
    assertTrue(TaskPlansErrors.isVersionMismatch(wrapped));
    assertEquals("VERSION_MISMATCH", TaskPlansException.of(wrapped).orElseThrow().reason());
  }
}
