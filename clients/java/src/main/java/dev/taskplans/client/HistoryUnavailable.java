package dev.taskplans.client;

import java.util.OptionalLong;

/**
 * What a {@code HISTORY_UNAVAILABLE} carries ({@code ErrorInfo.metadata}, typed): see {@link
 * TaskPlansException#historyUnavailable()}.
 *
 * @param version the version whose content cannot be derived: {@code GetPlanChanges}' {@code
 *     since_version}, or a merge's {@code expected_version}
 * @param currentVersion the plan's current version: read the whole plan and use it
 * @param oldestVersion the oldest version {@code GetPlanChanges} can answer from now; empty when only
 *     the current one
 */
public record HistoryUnavailable(long version, long currentVersion, OptionalLong oldestVersion) {}
