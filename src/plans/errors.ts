/**
 * The closed set of domain errors. Each has a stable reason (UPPER_SNAKE_CASE, published in the
 * proto comments), a detail clause, the next action for the caller and string metadata. The gRPC
 * layer maps reasons to status codes in one table (src/grpc/error-mapping.ts).
 */
export type Reason =
  | "INVALID_FIELD"
  | "INVALID_WRITE_MODE"
  | "CONTENT_REQUIRED"
  | "FRAGMENT_BLANK"
  | "VERSION_REQUIRED"
  | "REDUCTION_ACK_NOT_APPLICABLE"
  | "TASK_NOT_REACHABLE"
  | "TASK_NOT_FOUND"
  | "PLAN_NOT_FOUND"
  | "REVISION_NOT_FOUND"
  | "TASK_EXISTS"
  | "PLAN_EXISTS"
  | "VERSION_MISMATCH"
  | "WRITE_CONFLICT"
  | "PLAN_TOO_LARGE"
  | "REDUCTION_NOT_ACKNOWLEDGED"
  | "PLAN_READ_FAILED"
  | "STORAGE_UNAVAILABLE"
  | "LOCK_UNAVAILABLE"
  | "EDIT_TEXT_REQUIRED"
  | "EDIT_TEXT_NOT_FOUND"
  | "EDIT_TEXT_NOT_UNIQUE"
  | "REVISION_VERSION_REQUIRED"
  | "REVISION_CHANGED"
  | "OFFSET_OUT_OF_RANGE"
  | "REQUEST_ID_REUSED"
  | "HISTORY_QUOTA_EXCEEDED"
  | "RATE_LIMITED"
  | "WRITE_BUDGET_EXCEEDED"
  | "EXPENSIVE_CALLS_LIMITED"
  | "WATCH_HISTORY_EXPIRED"
  | "WATCH_TOO_SLOW"
  | "WATCH_DRAINING"
  | "WATCH_STREAMS_EXHAUSTED"
  | "HISTORY_UNAVAILABLE"
  | "MERGE_CONFLICT"
  | "MERGE_NOT_APPLICABLE"
  | "EXPORT_CHANGED"
  | "IMPORT_INVALID"
  | "IMPORT_NOT_PERMITTED"
  | "IMPORT_CONFLICT"
  | "COMMIT_OUTCOME_UNKNOWN";

/** A request field that failed validation (becomes a google.rpc.BadRequest field violation). */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

interface PlanErrorInit {
  readonly detail: string;
  readonly nextAction: string;
  readonly metadata?: Record<string, string>;
  readonly fieldViolations?: readonly FieldViolation[];
  /** How long to wait before retrying (becomes a google.rpc.RetryInfo). */
  readonly retryDelayMs?: number | undefined;
  /** The failure behind it, for the log only (never sent). */
  readonly cause?: unknown;
}

/** A rule violation or an expected failure; carries nothing from storage. */
export class PlanError extends Error {
  readonly reason: Reason;
  /** Lower-case clause saying what is wrong, without the next action. */
  readonly detail: string;
  /** What the caller should do next; also sent as ErrorInfo.metadata["next_action"]. */
  readonly nextAction: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly fieldViolations: readonly FieldViolation[];
  readonly retryDelayMs: number | null;

  constructor(reason: Reason, init: PlanErrorInit, message?: string) {
    super(message ?? `${capitalize(init.detail)}. ${init.nextAction}`, { cause: init.cause });
    this.name = "PlanError";
    this.reason = reason;
    this.detail = init.detail;
    this.nextAction = init.nextAction;
    this.metadata = { ...init.metadata, next_action: init.nextAction };
    this.fieldViolations = init.fieldViolations ?? [];
    this.retryDelayMs = init.retryDelayMs ?? null;
  }

  /**
   * The message of a failed write, led by what did not happen (seed 003: "Plan was not changed",
   * or "Task was not created"): "<outcome> because <detail>. <next action>".
   */
  notDoneMessage(outcome: string): string {
    // A write whose commit went unanswered cannot say what did not happen: it may have happened.
    if (this.reason === "COMMIT_OUTCOME_UNKNOWN") return this.message;
    return `${outcome} because ${this.detail}. ${this.nextAction}`;
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// How a stream that ended says where to resume (null: it had sent no version).
function resumeWatch(
  afterVersion: number | null,
  then: string,
): { nextAction: string; metadata: Record<string, string> } {
  return afterVersion === null
    ? { nextAction: `Watch again without after_version, ${then}`, metadata: {} }
    : {
        nextAction: `Watch again with after_version ${afterVersion}, ${then}`,
        metadata: { resume_after_version: String(afterVersion) },
      };
}

/** Constructors for every domain error, so wording and metadata stay in one place. */
export const planErrors = {
  invalidField(field: string, description: string): PlanError {
    return new PlanError("INVALID_FIELD", {
      detail: `field ${field} ${description}`,
      nextAction: `Correct ${field} and retry.`,
      metadata: { field },
      fieldViolations: [{ field, description }],
    });
  },
  invalidWriteMode(given: string): PlanError {
    return new PlanError("INVALID_WRITE_MODE", {
      detail: `mode ${given} is not recognized; the accepted values are "replace" and "append"`,
      nextAction: 'Retry with mode "replace" (the whole document) or "append" (only the addition).',
      metadata: { mode: given, accepted: "replace,append" },
    });
  },
  createHasNoMode(given: string): PlanError {
    return new PlanError("INVALID_WRITE_MODE", {
      detail: `CreatePlan does not take a mode (got ${given}): it always writes the whole document`,
      nextAction: "To add a section, call UpdatePlan with mode WRITE_MODE_APPEND; to create, omit mode.",
      metadata: { mode: given, use: "UpdatePlan mode=WRITE_MODE_APPEND" },
    });
  },
  contentRequired(): PlanError {
    return new PlanError("CONTENT_REQUIRED", {
      detail: "the content is empty",
      nextAction: "Send non-empty content: the whole document to replace, or the addition to append.",
    });
  },
  fragmentBlank(): PlanError {
    return new PlanError("FRAGMENT_BLANK", {
      detail: "the append fragment contains only whitespace",
      nextAction: "Append a fragment with at least one non-whitespace character.",
    });
  },
  versionRequired(): PlanError {
    return new PlanError("VERSION_REQUIRED", {
      detail: "replacing an existing plan requires the version you read (expected_version)",
      nextAction:
        "Read the plan with GetPlan, apply your change to that content, and retry with its version; to add a section use mode append, which needs no version.",
    });
  },
  reductionAckNotApplicable(): PlanError {
    return new PlanError("REDUCTION_ACK_NOT_APPLICABLE", {
      detail: "acknowledge_reduction applies only to a replacement; an append never removes content",
      nextAction: "Retry the append without acknowledge_reduction.",
      fieldViolations: [{ field: "acknowledge_reduction", description: "not applicable to append" }],
    });
  },
  taskNotReachable(): PlanError {
    return new PlanError("TASK_NOT_REACHABLE", {
      detail: "the task is not reachable with your credentials",
      nextAction: "Use a task in a workspace your token grants, or ask for access.",
    });
  },
  taskNotFound(taskId: string): PlanError {
    return new PlanError("TASK_NOT_FOUND", {
      detail: `task ${taskId} does not exist`,
      nextAction: "Check the task id, or create the task with TaskService.CreateTask first.",
      metadata: { task_id: taskId },
    });
  },
  planNotFound(taskId: string): PlanError {
    return new PlanError("PLAN_NOT_FOUND", {
      detail: `task ${taskId} has no plan`,
      nextAction: "Create the plan with CreatePlan (append never creates one).",
      metadata: { task_id: taskId },
    });
  },
  revisionNotFound(taskId: string, revisionId: string): PlanError {
    return new PlanError("REVISION_NOT_FOUND", {
      detail: `task ${taskId} has no revision ${revisionId}`,
      nextAction: "List the task's revisions with ListPlanRevisions and use one of their ids.",
      metadata: { task_id: taskId, revision_id: revisionId },
    });
  },
  exportChanged(taskId: string): PlanError {
    return new PlanError("EXPORT_CHANGED", {
      detail: `task ${taskId} changed since the export's first page was read`,
      nextAction: "Export the task again from its first page (no snapshot, after_revision_number 0).",
      metadata: { task_id: taskId },
    });
  },
  importInvalid(taskId: string, problem: string): PlanError {
    return new PlanError("IMPORT_INVALID", {
      detail: `the import of task ${taskId} is not one consistent task: ${problem}`,
      nextAction: "Export the task again and import that file; nothing of this task was imported.",
      metadata: { task_id: taskId, problem },
    });
  },
  importNotPermitted(): PlanError {
    return new PlanError("IMPORT_NOT_PERMITTED", {
      detail: "only an operator may import tasks",
      nextAction:
        "Use a token whose subject is listed in the server's PLAN_AUTH_OPERATOR_SUBJECTS, or ask an operator to import.",
    });
  },
  importConflict(taskId: string): PlanError {
    return new PlanError("IMPORT_CONFLICT", {
      detail: `task ${taskId} exists with other content than the imported one`,
      nextAction:
        "Import with overwrite to replace it (its plan and history are deleted), or delete or rename the existing task first.",
      metadata: { task_id: taskId },
    });
  },
  taskExists(taskId: string): PlanError {
    return new PlanError("TASK_EXISTS", {
      detail: `task ${taskId} already exists`,
      nextAction: "Use the existing task or choose another id.",
      metadata: { task_id: taskId },
    });
  },
  planExists(taskId: string): PlanError {
    return new PlanError("PLAN_EXISTS", {
      detail: `task ${taskId} already has a plan`,
      nextAction:
        "Read it with GetPlan; add a section with UpdatePlan mode append, or replace it by passing the version you read as expected_version.",
      metadata: { task_id: taskId },
    });
  },
  versionMismatch(): PlanError {
    // Deliberately no current version: the caller must read the plan again (seed 003).
    return new PlanError("VERSION_MISMATCH", {
      detail: "the plan changed since the version you read (expected_version is stale)",
      nextAction:
        "Read the plan again with GetPlan, apply your change to that content, and retry with its version.",
    });
  },
  writeConflict(): PlanError {
    return new PlanError("WRITE_CONFLICT", {
      detail: "a concurrent write to the same task won",
      nextAction: "Read the plan again and retry your change.",
    });
  },
  planTooLarge(sizeBytes: number, limitBytes: number): PlanError {
    return new PlanError("PLAN_TOO_LARGE", {
      detail: `the plan would be ${sizeBytes} bytes, exceeding the ${limitBytes}-byte limit; nothing was stored`,
      nextAction:
        "Shorten the document you are holding before writing again; do not resubmit this content unchanged and do not reconstruct the plan from memory.",
      metadata: { size_bytes: String(sizeBytes), limit_bytes: String(limitBytes) },
    });
  },
  reductionNotAcknowledged(priorChars: number, newChars: number): PlanError {
    return new PlanError("REDUCTION_NOT_ACKNOWLEDGED", {
      detail: `the replacement keeps ${newChars} of ${priorChars} characters, removing most of the document`,
      nextAction:
        "Resend the complete document, or add a section with mode append; only if the reduction is intended, retry with acknowledge_reduction set, and the prior content stays in the revision history. Do not rewrite the plan from memory.",
      metadata: { prior_chars: String(priorChars), new_chars: String(newChars) },
    });
  },
  /**
   * Stored content failed its read check. An append keeps the text of AC-TASKS-PLAN-APPEND-003.5;
   * other writes and reads say how the task is recovered (the runbook's "A plan that cannot be read").
   */
  planReadFailed(during: "append" | "write" | "read" = "append", cause?: unknown): PlanError {
    if (during === "append") {
      return new PlanError("PLAN_READ_FAILED", {
        detail: "the stored plan could not be read, so the append was not applied",
        nextAction: "Retry later; do not create the plan again and do not resend the whole document.",
        cause,
      });
    }
    return new PlanError("PLAN_READ_FAILED", {
      detail:
        during === "write"
          ? "the stored plan could not be read, so the write was not applied"
          : "the stored content could not be read",
      nextAction:
        "Retry later. If it persists, recover the plan: RevertPlan to a good revision (ListPlanRevisions, GetPlanRevision) or SavePlan with the whole document; do not append to it.",
      cause,
    });
  },
  storageUnavailable(): PlanError {
    return new PlanError("STORAGE_UNAVAILABLE", {
      detail: "the plan store is unavailable",
      nextAction: "Retry with backoff.",
    });
  },
  /**
   * The write's COMMIT was sent and never answered (the database crashed, shut down or dropped the
   * connection): it may have been applied. Its own reason, never STORAGE_UNAVAILABLE, which says
   * nothing was written. A retry with the same request_id is answered from what an applied write
   * remembered (in the same transaction) or applies it once; a new request_id could apply it twice.
   */
  commitOutcomeUnknown(): PlanError {
    return new PlanError("COMMIT_OUTCOME_UNKNOWN", {
      detail: "the write may have been applied: the database did not answer its commit",
      nextAction:
        "Retry with the same request_id, never a new one: the retry is applied once or answered with the original result. A write without request_id (or that takes none): read the plan or task back before writing again.",
      metadata: { outcome: "unknown" },
    });
  },
  lockUnavailable(): PlanError {
    return new PlanError("LOCK_UNAVAILABLE", {
      detail: "the task's write lock could not be obtained in time",
      nextAction: "Retry with backoff.",
    });
  },
  editTextRequired(): PlanError {
    return new PlanError("EDIT_TEXT_REQUIRED", {
      detail: "old_text is empty",
      nextAction: "Retry with one non-empty fragment copied exactly from the current plan.",
      fieldViolations: [{ field: "old_text", description: "must not be empty" }],
    });
  },
  editTextNotFound(): PlanError {
    return new PlanError("EDIT_TEXT_NOT_FOUND", {
      detail: "old_text does not occur in the current plan",
      nextAction: "Read the plan again and copy old_text exactly (whitespace and line endings included).",
    });
  },
  editTextNotUnique(occurrences: number): PlanError {
    return new PlanError("EDIT_TEXT_NOT_UNIQUE", {
      detail: `old_text occurs ${occurrences} times in the current plan, so the edit is ambiguous`,
      nextAction: "Retry with a longer old_text that occurs exactly once.",
      metadata: { occurrences: String(occurrences) },
    });
  },
  revisionVersionRequired(): PlanError {
    return new PlanError("REVISION_VERSION_REQUIRED", {
      detail: "restoring a revision requires the revision_version you inspected (expected_revision_version)",
      nextAction:
        "Read the revision with GetPlanRevision and retry with its revision_version and the plan's current version.",
      fieldViolations: [{ field: "expected_revision_version", description: "is required" }],
    });
  },
  revisionChanged(): PlanError {
    return new PlanError("REVISION_CHANGED", {
      detail: "the revision changed since you read it (a later write was coalesced into it)",
      nextAction: "Read the revision again with GetPlanRevision and decide again before restoring.",
    });
  },
  offsetOutOfRange(offset: number, totalChars: number): PlanError {
    return new PlanError("OFFSET_OUT_OF_RANGE", {
      detail: `offset ${offset} is past the end of the plan (${totalChars} characters)`,
      nextAction: `Use an offset between 0 and ${totalChars}.`,
      metadata: { offset: String(offset), total_chars: String(totalChars) },
    });
  },
  rateLimited(writes: number, windowMs: number, retryDelayMs: number): PlanError {
    return new PlanError("RATE_LIMITED", {
      detail: `you sent more than ${writes} writes in ${windowMs} ms`,
      nextAction: `Wait ${retryDelayMs} ms (google.rpc.RetryInfo) and retry; retry with the same request_id to stay safe.`,
      metadata: {
        limit_writes: String(writes),
        window_ms: String(windowMs),
        retry_after_ms: String(retryDelayMs),
      },
      retryDelayMs,
    });
  },
  writeBudgetExceeded(bytes: number, windowMs: number, retryDelayMs: number): PlanError {
    return new PlanError("WRITE_BUDGET_EXCEEDED", {
      detail: `your writes stored more than ${bytes} bytes of plan text in ${windowMs} ms`,
      nextAction: `Wait ${retryDelayMs} ms (google.rpc.RetryInfo) and retry; retry with the same request_id to stay safe. Writing smaller changes (mode append, EditPlan) stores fewer bytes.`,
      metadata: {
        limit_bytes: String(bytes),
        window_ms: String(windowMs),
        retry_after_ms: String(retryDelayMs),
      },
      retryDelayMs,
    });
  },
  expensiveCallsLimited(limit: "caller" | "replica", calls: number, retryDelayMs: number): PlanError {
    const who =
      limit === "caller"
        ? `you have ${calls} expensive call${calls === 1 ? "" : "s"} (diffs, merges) in flight, your limit`
        : `the replica runs ${calls} expensive calls (diffs, merges) at once, its limit`;
    return new PlanError("EXPENSIVE_CALLS_LIMITED", {
      detail: who,
      nextAction: `Wait ${retryDelayMs} ms (google.rpc.RetryInfo) and retry; retry a write with the same request_id to stay safe.`,
      metadata: { limit, limit_calls: String(calls), retry_after_ms: String(retryDelayMs) },
      retryDelayMs,
    });
  },
  historyQuotaExceeded(limit: "revisions" | "bytes", max: number, used: number): PlanError {
    const what = limit === "revisions" ? "revisions" : "bytes of stored plan text";
    return new PlanError("HISTORY_QUOTA_EXCEEDED", {
      detail: `the task's history would exceed its budget of ${max} ${what} (it holds ${used})`,
      nextAction:
        "Stop writing to this task's plan for now and ask an operator: the history budget (PLAN_HISTORY_MAX_REVISIONS, PLAN_HISTORY_MAX_BYTES) bounds what one task may store.",
      metadata: { limit: limit, [`limit_${limit}`]: String(max), [`used_${limit}`]: String(used) },
    });
  },
  requestIdReused(requestId: string): PlanError {
    return new PlanError("REQUEST_ID_REUSED", {
      detail: `request_id ${requestId} was already used for a different write to this task`,
      nextAction: "Use a new request_id for a new write; reuse one only to retry exactly the same request.",
      metadata: { request_id_reused: requestId },
      fieldViolations: [{ field: "request_id", description: "already used with another payload" }],
    });
  },
  watchHistoryExpired(afterVersion: number, currentVersion: number): PlanError {
    return new PlanError("WATCH_HISTORY_EXPIRED", {
      detail:
        afterVersion > currentVersion
          ? `the resume point (after_version ${afterVersion}) is ahead of the plan (version ${currentVersion})`
          : `the changes after version ${afterVersion} are no longer retained`,
      nextAction:
        "Read the plan again with GetPlan and watch with after_version set to the version you read (or omit after_version to start with a snapshot).",
      metadata: { after_version: String(afterVersion), current_version: String(currentVersion) },
    });
  },
  /**
   * The content at `version` cannot be derived (pruned, trimmed to the history budget, never
   * written, or ahead of the plan): a changes read refuses, and so does a merge that needs it as
   * its base. `oldest`: the oldest version that can be answered from now (null: only the current).
   */
  historyUnavailable(
    during: "read" | "merge",
    version: number,
    currentVersion: number,
    oldest: number | null,
  ): PlanError {
    const metadata: Record<string, string> = {
      [during === "read" ? "since_version" : "expected_version"]: String(version),
      current_version: String(currentVersion),
    };
    if (oldest !== null) metadata.oldest_version = String(oldest);
    const from = oldest === null ? "" : ` (the oldest version it can answer from is ${oldest})`;
    return new PlanError("HISTORY_UNAVAILABLE", {
      detail:
        during === "read"
          ? `the content at version ${version} can no longer be derived${from}`
          : `the content at version ${version} (expected_version) can no longer be derived, so nothing could be merged${from}`,
      nextAction:
        during === "read"
          ? "Read the whole plan with GetPlan and use its version from now on."
          : "Read the whole plan with GetPlan, apply your change to that content, and retry with its version.",
      metadata,
    });
  },
  /** A merge found changes of both sides at the same place; `conflicts` is the bounded rendering. */
  mergeConflict(
    baseVersion: number,
    currentVersion: number,
    regions: number,
    conflicts: string,
    tooDifferent: boolean,
  ): PlanError {
    return new PlanError("MERGE_CONFLICT", {
      detail: tooDifferent
        ? `your change and the changes made since version ${baseVersion} differ too much to merge (the plan is at version ${currentVersion}); nothing was written`
        : `your change and the changes made since version ${baseVersion} touch the same lines in ${regions} ${regions === 1 ? "place" : "places"} (the plan is at version ${currentVersion}); nothing was written`,
      nextAction: `Read what changed with GetPlanChanges since_version ${baseVersion} (metadata "conflicts" shows the conflicting lines), redo your change on the current content, and retry with expected_version ${currentVersion}.`,
      metadata: {
        base_version: String(baseVersion),
        current_version: String(currentVersion),
        conflict_regions: String(regions),
        conflicts,
        ...(tooDifferent ? { too_different: "true" } : {}),
      },
    });
  },
  mergeNotApplicable(reason: "append" | "no-version"): PlanError {
    const description =
      reason === "append"
        ? "not applicable to append, which composes on the current plan"
        : "needs expected_version (the version your content is based on)";
    return new PlanError("MERGE_NOT_APPLICABLE", {
      detail:
        reason === "append"
          ? "merge applies only to a replace; an append always adds to the current plan and needs no merge"
          : "merge needs expected_version, the version your content is based on",
      nextAction:
        reason === "append"
          ? "Retry the append without merge (and without expected_version to append whatever changed)."
          : "Retry with expected_version set to the version you read, or without merge to create the plan.",
      fieldViolations: [{ field: "merge", description }],
    });
  },
  watchTooSlow(resumeAfterVersion: number | null): PlanError {
    return new PlanError("WATCH_TOO_SLOW", {
      detail: "the stream's buffer filled because the client read its changes too slowly",
      ...resumeWatch(resumeAfterVersion, "and read the stream promptly."),
    });
  },
  watchStreamsExhausted(maxStreams: number, retryDelayMs: number): PlanError {
    return new PlanError("WATCH_STREAMS_EXHAUSTED", {
      detail: `this replica already serves its ${maxStreams} WatchPlan streams`,
      nextAction: `Wait ${retryDelayMs} ms (google.rpc.RetryInfo) and open the stream again, through this replica or another.`,
      metadata: { max_streams: String(maxStreams), retry_after_ms: String(retryDelayMs) },
      retryDelayMs,
    });
  },
  watchDraining(resumeAfterVersion: number | null): PlanError {
    return new PlanError("WATCH_DRAINING", {
      detail: "this replica is shutting down",
      ...resumeWatch(resumeAfterVersion, "through another replica."),
    });
  },
};
