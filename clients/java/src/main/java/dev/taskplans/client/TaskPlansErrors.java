package dev.taskplans.client;

import java.util.function.Predicate;

/**
 * The helpers of clients/SDK.md by reason group, for any throwable: each is false for anything that
 * is not a failed call of this service (see {@link TaskPlansException#of(Throwable)}). On a
 * TaskPlansException itself the instance methods ({@code e.isVersionMismatch()}) say the same.
 */
public final class TaskPlansErrors {
  private TaskPlansErrors() {}

  private static boolean test(Throwable error, Predicate<TaskPlansException> check) {
    return TaskPlansException.of(error).map(check::test).orElse(false);
  }

  /** {@code VERSION_MISMATCH} or {@code REVISION_CHANGED}: read again, then decide again. */
  public static boolean isVersionMismatch(Throwable error) {
    return test(error, TaskPlansException::isVersionMismatch);
  }

  /** {@code PLAN_NOT_FOUND}, {@code TASK_NOT_FOUND} or {@code REVISION_NOT_FOUND}. */
  public static boolean isNotFound(Throwable error) {
    return test(error, TaskPlansException::isNotFound);
  }

  /** {@code TASK_EXISTS} or {@code PLAN_EXISTS}. */
  public static boolean isAlreadyExists(Throwable error) {
    return test(error, TaskPlansException::isAlreadyExists);
  }

  /** Code {@code UNAUTHENTICATED}, or reason {@code TASK_NOT_REACHABLE}. */
  public static boolean isAuthError(Throwable error) {
    return test(error, TaskPlansException::isAuthError);
  }

  /** Code {@code INVALID_ARGUMENT}. */
  public static boolean isInvalidArgument(Throwable error) {
    return test(error, TaskPlansException::isInvalidArgument);
  }

  /** Code {@code FAILED_PRECONDITION} (the content rules: reduction, size, edit text). */
  public static boolean isPreconditionFailed(Throwable error) {
    return test(error, TaskPlansException::isPreconditionFailed);
  }

  /** {@code RATE_LIMITED}, {@code WRITE_BUDGET_EXCEEDED} or {@code HISTORY_QUOTA_EXCEEDED}. */
  public static boolean isRateLimited(Throwable error) {
    return test(error, TaskPlansException::isRateLimited);
  }

  /** What the retry policy retries (code and reason, whatever the method). */
  public static boolean isRetriable(Throwable error) {
    return test(error, TaskPlansException::isRetriable);
  }

  /** {@code WATCH_HISTORY_EXPIRED}. */
  public static boolean isWatchHistoryExpired(Throwable error) {
    return test(error, TaskPlansException::isWatchHistoryExpired);
  }

  /** {@code WATCH_TOO_SLOW} ({@code resume_after_version} in the metadata says where to resume). */
  public static boolean isWatchTooSlow(Throwable error) {
    return test(error, TaskPlansException::isWatchTooSlow);
  }

  /** {@code HISTORY_UNAVAILABLE}: read the whole plan. */
  public static boolean isHistoryUnavailable(Throwable error) {
    return test(error, TaskPlansException::isHistoryUnavailable);
  }

  /** {@code MERGE_CONFLICT}: nothing was written; read the changes since your version and redo. */
  public static boolean isMergeConflict(Throwable error) {
    return test(error, TaskPlansException::isMergeConflict);
  }
}
