import { planErrors, type PlanError } from "../../../src/plans/errors";

// Every domain error's wording, pinned as literal text in one place (issue 12): an agent reads these
// after a rejection, so a change to one must show up here, in review. Writes prefix "Plan was not
// changed because" (notDoneMessage, which the wire mapping applies; checked at the end).
const TABLE: [string, () => PlanError, string, string][] = [
  [
    'invalidField("task_id", "is required")',
    () => planErrors.invalidField("task_id", "is required"),
    "INVALID_FIELD",
    "Field task_id is required. Correct task_id and retry.",
  ],
  [
    "invalidWriteMode('\"x\"')",
    () => planErrors.invalidWriteMode('"x"'),
    "INVALID_WRITE_MODE",
    'Mode "x" is not recognized; the accepted values are "replace" and "append". Retry with mode "replace" (the whole document) or "append" (only the addition).',
  ],
  [
    "createHasNoMode('\"append\"')",
    () => planErrors.createHasNoMode('"append"'),
    "INVALID_WRITE_MODE",
    'CreatePlan does not take a mode (got "append"): it always writes the whole document. To add a section, call UpdatePlan with mode WRITE_MODE_APPEND; to create, omit mode.',
  ],
  [
    "contentRequired()",
    () => planErrors.contentRequired(),
    "CONTENT_REQUIRED",
    "The content is empty. Send non-empty content: the whole document to replace, or the addition to append.",
  ],
  [
    "fragmentBlank()",
    () => planErrors.fragmentBlank(),
    "FRAGMENT_BLANK",
    "The append fragment contains only whitespace. Append a fragment with at least one non-whitespace character.",
  ],
  [
    "versionRequired()",
    () => planErrors.versionRequired(),
    "VERSION_REQUIRED",
    "Replacing an existing plan requires the version you read (expected_version). Read the plan with GetPlan, apply your change to that content, and retry with its version; to add a section use mode append, which needs no version.",
  ],
  [
    "reductionAckNotApplicable()",
    () => planErrors.reductionAckNotApplicable(),
    "REDUCTION_ACK_NOT_APPLICABLE",
    "Acknowledge_reduction applies only to a replacement; an append never removes content. Retry the append without acknowledge_reduction.",
  ],
  [
    "taskNotReachable()",
    () => planErrors.taskNotReachable(),
    "TASK_NOT_REACHABLE",
    "The task is not reachable with your credentials. Use a task in a workspace your token grants, or ask for access.",
  ],
  [
    'taskNotFound("t-1")',
    () => planErrors.taskNotFound("t-1"),
    "TASK_NOT_FOUND",
    "Task t-1 does not exist. Check the task id, or create the task with TaskService.CreateTask first.",
  ],
  [
    'planNotFound("t-1")',
    () => planErrors.planNotFound("t-1"),
    "PLAN_NOT_FOUND",
    "Task t-1 has no plan. Create the plan with CreatePlan (append never creates one).",
  ],
  [
    'revisionNotFound("t-1", "r-1")',
    () => planErrors.revisionNotFound("t-1", "r-1"),
    "REVISION_NOT_FOUND",
    "Task t-1 has no revision r-1. List the task's revisions with ListPlanRevisions and use one of their ids.",
  ],
  [
    'taskExists("t-1")',
    () => planErrors.taskExists("t-1"),
    "TASK_EXISTS",
    "Task t-1 already exists. Use the existing task or choose another id.",
  ],
  [
    'planExists("t-1")',
    () => planErrors.planExists("t-1"),
    "PLAN_EXISTS",
    "Task t-1 already has a plan. Read it with GetPlan; add a section with UpdatePlan mode append, or replace it by passing the version you read as expected_version.",
  ],
  [
    "versionMismatch()",
    () => planErrors.versionMismatch(),
    "VERSION_MISMATCH",
    "The plan changed since the version you read (expected_version is stale). Read the plan again with GetPlan, apply your change to that content, and retry with its version.",
  ],
  [
    "writeConflict()",
    () => planErrors.writeConflict(),
    "WRITE_CONFLICT",
    "A concurrent write to the same task won. Read the plan again and retry your change.",
  ],
  [
    "planTooLarge(300000, 262144)",
    () => planErrors.planTooLarge(300000, 262144),
    "PLAN_TOO_LARGE",
    "The plan would be 300000 bytes, exceeding the 262144-byte limit; nothing was stored. Shorten the document you are holding before writing again; do not resubmit this content unchanged and do not reconstruct the plan from memory.",
  ],
  [
    "reductionNotAcknowledged(4000, 10)",
    () => planErrors.reductionNotAcknowledged(4000, 10),
    "REDUCTION_NOT_ACKNOWLEDGED",
    "The replacement keeps 10 of 4000 characters, removing most of the document. Resend the complete document, or add a section with mode append; only if the reduction is intended, retry with acknowledge_reduction set, and the prior content stays in the revision history. Do not rewrite the plan from memory.",
  ],
  [
    "planReadFailed()",
    () => planErrors.planReadFailed(),
    "PLAN_READ_FAILED",
    "The stored plan could not be read, so the append was not applied. Retry later; do not create the plan again and do not resend the whole document.",
  ],
  [
    'planReadFailed("write")',
    () => planErrors.planReadFailed("write"),
    "PLAN_READ_FAILED",
    "The stored plan could not be read, so the write was not applied. Retry later. If it persists, recover the plan: RevertPlan to a good revision (ListPlanRevisions, GetPlanRevision) or SavePlan with the whole document; do not append to it.",
  ],
  [
    'planReadFailed("read")',
    () => planErrors.planReadFailed("read"),
    "PLAN_READ_FAILED",
    "The stored content could not be read. Retry later. If it persists, recover the plan: RevertPlan to a good revision (ListPlanRevisions, GetPlanRevision) or SavePlan with the whole document; do not append to it.",
  ],
  [
    "storageUnavailable()",
    () => planErrors.storageUnavailable(),
    "STORAGE_UNAVAILABLE",
    "The plan store is unavailable. Retry with backoff.",
  ],
  [
    "commitOutcomeUnknown()",
    () => planErrors.commitOutcomeUnknown(),
    "COMMIT_OUTCOME_UNKNOWN",
    "The write may have been applied: the database did not answer its commit. Retry with the same request_id, never a new one: the retry is applied once or answered with the original result. A write without request_id (or that takes none): read the plan or task back before writing again.",
  ],
  [
    "lockUnavailable()",
    () => planErrors.lockUnavailable(),
    "LOCK_UNAVAILABLE",
    "The task's write lock could not be obtained in time. Retry with backoff.",
  ],
  [
    "editTextRequired()",
    () => planErrors.editTextRequired(),
    "EDIT_TEXT_REQUIRED",
    "Old_text is empty. Retry with one non-empty fragment copied exactly from the current plan.",
  ],
  [
    "editTextNotFound()",
    () => planErrors.editTextNotFound(),
    "EDIT_TEXT_NOT_FOUND",
    "Old_text does not occur in the current plan. Read the plan again and copy old_text exactly (whitespace and line endings included).",
  ],
  [
    "editTextNotUnique(3)",
    () => planErrors.editTextNotUnique(3),
    "EDIT_TEXT_NOT_UNIQUE",
    "Old_text occurs 3 times in the current plan, so the edit is ambiguous. Retry with a longer old_text that occurs exactly once.",
  ],
  [
    "revisionVersionRequired()",
    () => planErrors.revisionVersionRequired(),
    "REVISION_VERSION_REQUIRED",
    "Restoring a revision requires the revision_version you inspected (expected_revision_version). Read the revision with GetPlanRevision and retry with its revision_version and the plan's current version.",
  ],
  [
    "revisionChanged()",
    () => planErrors.revisionChanged(),
    "REVISION_CHANGED",
    "The revision changed since you read it (a later write was coalesced into it). Read the revision again with GetPlanRevision and decide again before restoring.",
  ],
  [
    "offsetOutOfRange(5, 4)",
    () => planErrors.offsetOutOfRange(5, 4),
    "OFFSET_OUT_OF_RANGE",
    "Offset 5 is past the end of the plan (4 characters). Use an offset between 0 and 4.",
  ],
  [
    "rateLimited(100, 1000, 250)",
    () => planErrors.rateLimited(100, 1000, 250),
    "RATE_LIMITED",
    "You sent more than 100 writes in 1000 ms. Wait 250 ms (google.rpc.RetryInfo) and retry; retry with the same request_id to stay safe.",
  ],
  [
    "writeBudgetExceeded(67108864, 60000, 41000)",
    () => planErrors.writeBudgetExceeded(67108864, 60000, 41000),
    "WRITE_BUDGET_EXCEEDED",
    "Your writes stored more than 67108864 bytes of plan text in 60000 ms. Wait 41000 ms (google.rpc.RetryInfo) and retry; retry with the same request_id to stay safe. Writing smaller changes (mode append, EditPlan) stores fewer bytes.",
  ],
  [
    'expensiveCallsLimited("caller", 4, 1000)',
    () => planErrors.expensiveCallsLimited("caller", 4, 1000),
    "EXPENSIVE_CALLS_LIMITED",
    "You have 4 expensive calls (diffs, merges) in flight, your limit. Wait 1000 ms (google.rpc.RetryInfo) and retry; retry a write with the same request_id to stay safe.",
  ],
  [
    'expensiveCallsLimited("replica", 8, 1000)',
    () => planErrors.expensiveCallsLimited("replica", 8, 1000),
    "EXPENSIVE_CALLS_LIMITED",
    "The replica runs 8 expensive calls (diffs, merges) at once, its limit. Wait 1000 ms (google.rpc.RetryInfo) and retry; retry a write with the same request_id to stay safe.",
  ],
  [
    'historyQuotaExceeded("revisions", 10000, 10000)',
    () => planErrors.historyQuotaExceeded("revisions", 10000, 10000),
    "HISTORY_QUOTA_EXCEEDED",
    "The task's history would exceed its budget of 10000 revisions (it holds 10000). Stop writing to this task's plan for now and ask an operator: the history budget (PLAN_HISTORY_MAX_REVISIONS, PLAN_HISTORY_MAX_BYTES) bounds what one task may store.",
  ],
  [
    'requestIdReused("r-1")',
    () => planErrors.requestIdReused("r-1"),
    "REQUEST_ID_REUSED",
    "Request_id r-1 was already used for a different write to this task. Use a new request_id for a new write; reuse one only to retry exactly the same request.",
  ],
  [
    "watchHistoryExpired(3, 9)",
    () => planErrors.watchHistoryExpired(3, 9),
    "WATCH_HISTORY_EXPIRED",
    "The changes after version 3 are no longer retained. Read the plan again with GetPlan and watch with after_version set to the version you read (or omit after_version to start with a snapshot).",
  ],
  [
    "watchHistoryExpired(12, 9)",
    () => planErrors.watchHistoryExpired(12, 9),
    "WATCH_HISTORY_EXPIRED",
    "The resume point (after_version 12) is ahead of the plan (version 9). Read the plan again with GetPlan and watch with after_version set to the version you read (or omit after_version to start with a snapshot).",
  ],
  [
    "watchTooSlow(7)",
    () => planErrors.watchTooSlow(7),
    "WATCH_TOO_SLOW",
    "The stream's buffer filled because the client read its changes too slowly. Watch again with after_version 7, and read the stream promptly.",
  ],
  [
    "watchTooSlow(null)",
    () => planErrors.watchTooSlow(null),
    "WATCH_TOO_SLOW",
    "The stream's buffer filled because the client read its changes too slowly. Watch again without after_version, and read the stream promptly.",
  ],
  [
    "historyUnavailable(read)",
    () => planErrors.historyUnavailable("read", 3, 9, 5),
    "HISTORY_UNAVAILABLE",
    "The content at version 3 can no longer be derived (the oldest version it can answer from is 5). Read the whole plan with GetPlan and use its version from now on.",
  ],
  [
    "historyUnavailable(merge)",
    () => planErrors.historyUnavailable("merge", 3, 9, null),
    "HISTORY_UNAVAILABLE",
    "The content at version 3 (expected_version) can no longer be derived, so nothing could be merged. Read the whole plan with GetPlan, apply your change to that content, and retry with its version.",
  ],
  [
    "mergeConflict(regions)",
    () => planErrors.mergeConflict(3, 5, 2, "@@ base lines 1-1 @@\n", false),
    "MERGE_CONFLICT",
    'Your change and the changes made since version 3 touch the same lines in 2 places (the plan is at version 5); nothing was written. Read what changed with GetPlanChanges since_version 3 (metadata "conflicts" shows the conflicting lines), redo your change on the current content, and retry with expected_version 5.',
  ],
  [
    "mergeConflict(too different)",
    () => planErrors.mergeConflict(3, 5, 1, "", true),
    "MERGE_CONFLICT",
    'Your change and the changes made since version 3 differ too much to merge (the plan is at version 5); nothing was written. Read what changed with GetPlanChanges since_version 3 (metadata "conflicts" shows the conflicting lines), redo your change on the current content, and retry with expected_version 5.',
  ],
  [
    "mergeNotApplicable(append)",
    () => planErrors.mergeNotApplicable("append"),
    "MERGE_NOT_APPLICABLE",
    "Merge applies only to a replace; an append always adds to the current plan and needs no merge. Retry the append without merge (and without expected_version to append whatever changed).",
  ],
  [
    "mergeNotApplicable(no version)",
    () => planErrors.mergeNotApplicable("no-version"),
    "MERGE_NOT_APPLICABLE",
    "Merge needs expected_version, the version your content is based on. Retry with expected_version set to the version you read, or without merge to create the plan.",
  ],
  [
    "exportChanged()",
    () => planErrors.exportChanged("t1"),
    "EXPORT_CHANGED",
    "Task t1 changed since the export's first page was read. Export the task again from its first page (no snapshot, after_revision_number 0).",
  ],
  [
    "importInvalid(t1)",
    () => planErrors.importInvalid("t1", "revision 2 is numbered 3"),
    "IMPORT_INVALID",
    "The import of task t1 is not one consistent task: revision 2 is numbered 3. Export the task again and import that file; nothing of this task was imported.",
  ],
  [
    "importNotPermitted()",
    () => planErrors.importNotPermitted(),
    "IMPORT_NOT_PERMITTED",
    "Only an operator may import tasks. Use a token whose subject is listed in the server's PLAN_AUTH_OPERATOR_SUBJECTS, or ask an operator to import.",
  ],
  [
    "importConflict(t1)",
    () => planErrors.importConflict("t1"),
    "IMPORT_CONFLICT",
    "Task t1 exists with other content than the imported one. Import with overwrite to replace it (its plan and history are deleted), or delete or rename the existing task first.",
  ],
  [
    "watchDraining(7)",
    () => planErrors.watchDraining(7),
    "WATCH_DRAINING",
    "This replica is shutting down. Watch again with after_version 7, through another replica.",
  ],
  [
    "watchStreamsExhausted(1000, 1000)",
    () => planErrors.watchStreamsExhausted(1000, 1000),
    "WATCH_STREAMS_EXHAUSTED",
    "This replica already serves its 1000 WatchPlan streams. Wait 1000 ms (google.rpc.RetryInfo) and open the stream again, through this replica or another.",
  ],
];

describe("error messages, pinned", () => {
  it.each(TABLE)("%s", (_call, make, reason, message) => {
    const error = make();
    expect([error.reason, error.message]).toEqual([reason, message]);
    expect(error.message.endsWith(error.nextAction)).toBe(true);
    expect(error.metadata.next_action).toBe(error.nextAction);
  });

  it("covers every constructor of planErrors", () => {
    const covered = new Set(TABLE.map(([call]) => call.slice(0, call.indexOf("("))));
    expect([...covered].sort()).toEqual(Object.keys(planErrors).sort());
  });

  it("a rejected write says first that nothing changed, then the same detail and next action", () => {
    expect(planErrors.versionMismatch().notDoneMessage("Plan was not changed")).toBe(
      "Plan was not changed because the plan changed since the version you read (expected_version is stale). Read the plan again with GetPlan, apply your change to that content, and retry with its version.",
    );
  });
});
