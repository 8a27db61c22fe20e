package dev.taskplans.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Every failed call of this package throws a TaskPlansException: the gRPC status with the service's
 * rich error model read once ({@code google.rpc.ErrorInfo}, {@code BadRequest}, {@code RetryInfo}
 * from the {@code grpc-status-details-bin} trailer). Branch on {@link #reason()} (or the helpers
 * below), never on {@link #getMessage()}.
 *
 * <p>An error raised by the client library (a deadline, a dropped connection, a failing token
 * provider) carries no ErrorInfo: its {@link #reason()} is empty.
 */
public final class TaskPlansException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** {@code ErrorInfo.domain} of every error the task-plan service sends. */
  public static final String ERROR_DOMAIN = "taskplans";

  private final transient Status status;
  private final transient Metadata trailers;
  private final transient ErrorInfo errorInfo;
  private final transient List<FieldViolation> fieldViolations;
  private final transient Duration retryDelay;

  private TaskPlansException(
      Status status,
      Metadata trailers,
      ErrorInfo errorInfo,
      List<FieldViolation> fieldViolations,
      Duration retryDelay,
      Throwable cause) {
    super(
        status.getDescription() != null ? status.getDescription() : status.getCode().name(),
        cause);
    this.status = status;
    this.trailers = trailers;
    this.errorInfo = errorInfo;
    this.fieldViolations = List.copyOf(fieldViolations);
    this.retryDelay = retryDelay;
  }

  /** An error the client raises itself (no ErrorInfo): a failing token provider, an interrupt. */
  static TaskPlansException ofStatus(Status status) {
    return new TaskPlansException(status, new Metadata(), null, List.of(), null, status.getCause());
  }

  /** The TaskPlansException of a failed gRPC call: status, trailers and their rich details. */
  public static TaskPlansException fromStatus(Status status, Metadata trailers, Throwable cause) {
    Metadata safeTrailers = trailers != null ? trailers : new Metadata();
    com.google.rpc.Status rich;
    try {
      rich = StatusProto.fromStatusAndTrailers(status, safeTrailers);
    } catch (IllegalArgumentException e) { // details whose code disagrees with the status: keep the code
      rich = null;
    }
    ErrorInfo info = null;
    List<FieldViolation> violations = new ArrayList<>();
    Duration delay = null;
    if (rich != null) {
      for (Any detail : rich.getDetailsList()) {
        try {
          if (detail.is(ErrorInfo.class) && info == null) {
            info = detail.unpack(ErrorInfo.class);
          } else if (detail.is(BadRequest.class)) {
            for (BadRequest.FieldViolation v : detail.unpack(BadRequest.class).getFieldViolationsList())
              violations.add(new FieldViolation(v.getField(), v.getDescription()));
          } else if (detail.is(RetryInfo.class) && delay == null) {
            com.google.protobuf.Duration d = detail.unpack(RetryInfo.class).getRetryDelay();
            delay = Duration.ofSeconds(d.getSeconds(), d.getNanos());
          }
        } catch (InvalidProtocolBufferException malformed) {
          // A detail that does not parse is left out; the status itself still stands.
        }
      }
    }
    return new TaskPlansException(status, safeTrailers, info, violations, delay, cause);
  }

  /**
   * {@code error} as a TaskPlansException: itself, or the one of the gRPC status it (or a cause of it)
   * carries ({@link StatusRuntimeException}, {@link StatusException}); empty for anything else.
   */
  public static Optional<TaskPlansException> of(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof TaskPlansException e) return Optional.of(e);
      if (t instanceof StatusRuntimeException e)
        return Optional.of(fromStatus(e.getStatus(), e.getTrailers(), e));
      if (t instanceof StatusException e)
        return Optional.of(fromStatus(e.getStatus(), e.getTrailers(), e));
    }
    return Optional.empty();
  }

  /** The status code ({@code code().name()} is its name, e.g. {@code "ABORTED"}). */
  public Status.Code code() {
    return status.getCode();
  }

  /** The whole gRPC status (code, description, cause). */
  public Status status() {
    return status;
  }

  /** The response trailers (empty for an error the client raised). */
  public Metadata trailers() {
    return trailers;
  }

  /** {@code ErrorInfo.reason} ({@code "VERSION_MISMATCH"}), or {@code ""} when there is no ErrorInfo. */
  public String reason() {
    return errorInfo != null ? errorInfo.getReason() : "";
  }

  /** The {@code google.rpc.ErrorInfo} itself (reason, domain, metadata), when the error carries one. */
  public Optional<ErrorInfo> errorInfo() {
    return Optional.ofNullable(errorInfo);
  }

  /** {@code ErrorInfo.metadata} ({@code next_action} and {@code request_id} included); empty without one. */
  public Map<String, String> metadata() {
    return errorInfo != null ? errorInfo.getMetadataMap() : Map.of();
  }

  /** {@code metadata().get("next_action")}: what the server says to do next, or {@code ""}. */
  public String nextAction() {
    return metadata().getOrDefault("next_action", "");
  }

  /** The {@code google.rpc.BadRequest} field violations, in order (empty when there are none). */
  public List<FieldViolation> fieldViolations() {
    return fieldViolations;
  }

  /** The {@code google.rpc.RetryInfo} delay: wait at least this long before trying again. */
  public Optional<Duration> retryDelay() {
    return Optional.ofNullable(retryDelay);
  }

  /** For {@code WATCH_TOO_SLOW}: {@code metadata()["resume_after_version"]}, where to watch from again. */
  public OptionalLong resumeAfterVersion() {
    return version("resume_after_version");
  }

  /** {@code metadata().get(key)} as an unsigned number; empty when absent or not a number. */
  private OptionalLong version(String key) {
    String value = metadata().get(key);
    if (value == null) return OptionalLong.empty();
    try {
      return OptionalLong.of(Long.parseUnsignedLong(value));
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /** For {@code MERGE_CONFLICT}: its versions and conflicting regions, typed; empty for any other error. */
  public Optional<MergeConflict> mergeConflict() {
    if (!isMergeConflict()) return Optional.empty();
    return Optional.of(
        new MergeConflict(
            version("base_version").orElse(0),
            version("current_version").orElse(0),
            (int) version("conflict_regions").orElse(0),
            metadata().getOrDefault("conflicts", "")));
  }

  /** For {@code HISTORY_UNAVAILABLE}: the versions it names, typed; empty for any other error. */
  public Optional<HistoryUnavailable> historyUnavailable() {
    if (!isHistoryUnavailable()) return Optional.empty();
    OptionalLong since = version("since_version");
    return Optional.of(
        new HistoryUnavailable(
            since.isPresent() ? since.getAsLong() : version("expected_version").orElse(0),
            version("current_version").orElse(0),
            version("oldest_version")));
  }

  private boolean reasonIn(String... reasons) {
    return Set.of(reasons).contains(reason());
  }

  /** {@code VERSION_MISMATCH} or {@code REVISION_CHANGED}: read again, then decide again. */
  public boolean isVersionMismatch() {
    return reasonIn("VERSION_MISMATCH", "REVISION_CHANGED");
  }

  /** {@code PLAN_NOT_FOUND}, {@code TASK_NOT_FOUND} or {@code REVISION_NOT_FOUND}. */
  public boolean isNotFound() {
    return reasonIn("PLAN_NOT_FOUND", "TASK_NOT_FOUND", "REVISION_NOT_FOUND");
  }

  /** {@code TASK_EXISTS} or {@code PLAN_EXISTS}. */
  public boolean isAlreadyExists() {
    return reasonIn("TASK_EXISTS", "PLAN_EXISTS");
  }

  /** Code {@code UNAUTHENTICATED} (any reason), or reason {@code TASK_NOT_REACHABLE}. */
  public boolean isAuthError() {
    return code() == Status.Code.UNAUTHENTICATED || reasonIn("TASK_NOT_REACHABLE");
  }

  /** Code {@code INVALID_ARGUMENT} (any reason). */
  public boolean isInvalidArgument() {
    return code() == Status.Code.INVALID_ARGUMENT;
  }

  /** Code {@code FAILED_PRECONDITION}: the content rules (reduction, size, edit text). */
  public boolean isPreconditionFailed() {
    return code() == Status.Code.FAILED_PRECONDITION;
  }

  /** {@code RATE_LIMITED}, {@code WRITE_BUDGET_EXCEEDED} or {@code HISTORY_QUOTA_EXCEEDED}. */
  public boolean isRateLimited() {
    return reasonIn("RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "HISTORY_QUOTA_EXCEEDED");
  }

  /**
   * What the retry policy retries, whatever the method: {@code UNAVAILABLE} (any reason or none),
   * {@code RESOURCE_EXHAUSTED RATE_LIMITED}, {@code WRITE_BUDGET_EXCEEDED} or {@code EXPENSIVE_CALLS_LIMITED} (all with RetryInfo) and
   * {@code ABORTED WRITE_CONFLICT}.
   */
  public boolean isRetriable() {
    return switch (code()) {
      case UNAVAILABLE -> true;
      case RESOURCE_EXHAUSTED -> reasonIn("RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "EXPENSIVE_CALLS_LIMITED");
      case ABORTED -> reasonIn("WRITE_CONFLICT");
      default -> false;
    };
  }

  /** {@code WATCH_HISTORY_EXPIRED}: read the plan again and watch after its version. */
  public boolean isWatchHistoryExpired() {
    return reasonIn("WATCH_HISTORY_EXPIRED");
  }

  /** {@code WATCH_TOO_SLOW}: watch again after {@link #resumeAfterVersion()}. */
  public boolean isWatchTooSlow() {
    return reasonIn("WATCH_TOO_SLOW");
  }

  /**
   * {@code HISTORY_UNAVAILABLE}: the content at the version given ({@code GetPlanChanges}' {@code
   * since_version}, a merge's {@code expected_version}) can no longer be derived; read the whole plan
   * ({@link #historyUnavailable()} has the versions).
   */
  public boolean isHistoryUnavailable() {
    return reasonIn("HISTORY_UNAVAILABLE");
  }

  /**
   * {@code MERGE_CONFLICT}: a merge found your change and others' at the same lines and wrote nothing;
   * read the changes since your version, redo your change, retry ({@link #mergeConflict()} has the
   * regions).
   */
  public boolean isMergeConflict() {
    return reasonIn("MERGE_CONFLICT");
  }

  @Override
  public String toString() {
    String reason = reason().isEmpty() ? "" : " " + reason();
    return "TaskPlansException: " + code().name() + reason + ": " + getMessage();
  }
}
