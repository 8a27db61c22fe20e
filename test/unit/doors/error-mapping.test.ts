import { AuthenticationError } from "../../../src/auth/authentication-error";
import { planErrors } from "../../../src/plans/errors";
import { toWireError } from "../../../src/grpc/error-mapping";
import { decodeStatusDetails } from "@taskplans/client";
import {
  CommitOutcomeUnknownError,
  StorageConflictError,
  StorageCorruptionError,
  StorageUnavailableError,
} from "../../../src/plans/ports/store-errors";
import { LockUnavailableError } from "../../../src/plans/ports/task-lock";

// grpc.status numbers of the failures below.
const status = { ABORTED: 10, UNAVAILABLE: 14, INTERNAL: 13 };

// Literal codes (grpc.status numbers) so that a change to the table fails here.
const OK_NAMES: Record<number, string> = {
  3: "INVALID_ARGUMENT",
  5: "NOT_FOUND",
  6: "ALREADY_EXISTS",
  7: "PERMISSION_DENIED",
  8: "RESOURCE_EXHAUSTED",
  9: "FAILED_PRECONDITION",
  10: "ABORTED",
  11: "OUT_OF_RANGE",
  13: "INTERNAL",
  14: "UNAVAILABLE",
  16: "UNAUTHENTICATED",
};

describe("domain error -> gRPC status, pinned per reason", () => {
  it.each([
    [planErrors.invalidField("task_id", "is required"), "INVALID_ARGUMENT", "INVALID_FIELD"],
    [planErrors.invalidWriteMode('"Append"'), "INVALID_ARGUMENT", "INVALID_WRITE_MODE"],
    [planErrors.createHasNoMode('"append"'), "INVALID_ARGUMENT", "INVALID_WRITE_MODE"],
    [planErrors.contentRequired(), "INVALID_ARGUMENT", "CONTENT_REQUIRED"],
    [planErrors.fragmentBlank(), "INVALID_ARGUMENT", "FRAGMENT_BLANK"],
    [planErrors.versionRequired(), "INVALID_ARGUMENT", "VERSION_REQUIRED"],
    [planErrors.reductionAckNotApplicable(), "INVALID_ARGUMENT", "REDUCTION_ACK_NOT_APPLICABLE"],
    [planErrors.mergeNotApplicable("append"), "INVALID_ARGUMENT", "MERGE_NOT_APPLICABLE"],
    [planErrors.exportChanged("t"), "ABORTED", "EXPORT_CHANGED"],
    [planErrors.importInvalid("t", "p"), "INVALID_ARGUMENT", "IMPORT_INVALID"],
    [planErrors.importNotPermitted(), "PERMISSION_DENIED", "IMPORT_NOT_PERMITTED"],
    [planErrors.importConflict("t"), "ALREADY_EXISTS", "IMPORT_CONFLICT"],
    [planErrors.mergeConflict(3, 5, 1, "", false), "ABORTED", "MERGE_CONFLICT"],
    [planErrors.historyUnavailable("read", 3, 9, 5), "OUT_OF_RANGE", "HISTORY_UNAVAILABLE"],
    [planErrors.taskNotReachable(), "PERMISSION_DENIED", "TASK_NOT_REACHABLE"],
    [planErrors.taskNotFound("t"), "NOT_FOUND", "TASK_NOT_FOUND"],
    [planErrors.planNotFound("t"), "NOT_FOUND", "PLAN_NOT_FOUND"],
    [planErrors.revisionNotFound("t", "r"), "NOT_FOUND", "REVISION_NOT_FOUND"],
    [planErrors.taskExists("t"), "ALREADY_EXISTS", "TASK_EXISTS"],
    [planErrors.planExists("t"), "ALREADY_EXISTS", "PLAN_EXISTS"],
    [planErrors.versionMismatch(), "ABORTED", "VERSION_MISMATCH"],
    [planErrors.writeConflict(), "ABORTED", "WRITE_CONFLICT"],
    [planErrors.planTooLarge(262_145, 262_144), "FAILED_PRECONDITION", "PLAN_TOO_LARGE"],
    [planErrors.reductionNotAcknowledged(4000, 10), "FAILED_PRECONDITION", "REDUCTION_NOT_ACKNOWLEDGED"],
    [planErrors.planReadFailed(), "UNAVAILABLE", "PLAN_READ_FAILED"],
    [planErrors.storageUnavailable(), "UNAVAILABLE", "STORAGE_UNAVAILABLE"],
    [planErrors.commitOutcomeUnknown(), "UNAVAILABLE", "COMMIT_OUTCOME_UNKNOWN"],
    [planErrors.lockUnavailable(), "UNAVAILABLE", "LOCK_UNAVAILABLE"],
    [planErrors.editTextRequired(), "INVALID_ARGUMENT", "EDIT_TEXT_REQUIRED"],
    [planErrors.editTextNotFound(), "FAILED_PRECONDITION", "EDIT_TEXT_NOT_FOUND"],
    [planErrors.editTextNotUnique(2), "FAILED_PRECONDITION", "EDIT_TEXT_NOT_UNIQUE"],
    [planErrors.revisionVersionRequired(), "INVALID_ARGUMENT", "REVISION_VERSION_REQUIRED"],
    [planErrors.revisionChanged(), "ABORTED", "REVISION_CHANGED"],
    [planErrors.offsetOutOfRange(13, 12), "OUT_OF_RANGE", "OFFSET_OUT_OF_RANGE"],
    [planErrors.requestIdReused("r-1"), "INVALID_ARGUMENT", "REQUEST_ID_REUSED"],
    [planErrors.writeBudgetExceeded(1000, 60_000, 1500), "RESOURCE_EXHAUSTED", "WRITE_BUDGET_EXCEEDED"],
    [new AuthenticationError("TOKEN_MISSING"), "UNAUTHENTICATED", "TOKEN_MISSING"],
    [new AuthenticationError("TOKEN_INVALID"), "UNAUTHENTICATED", "TOKEN_INVALID"],
    [new AuthenticationError("TOKEN_EXPIRED"), "UNAUTHENTICATED", "TOKEN_EXPIRED"],
  ])("%# %s -> %s %s", (error, code, reason) => {
    const wire = toWireError(error, "req-1");
    expect(OK_NAMES[wire.code]).toBe(code);
    const details = decodeStatusDetails(wire.metadata);
    expect(details?.errorInfo?.reason).toBe(reason);
    expect(details?.errorInfo?.domain).toBe("taskplans");
    expect(details?.errorInfo?.metadata.request_id).toBe("req-1");
    expect(details?.code).toBe(wire.code);
    expect(details?.message).toBe(wire.details);
    expect(wire.internal).toBe(false);
  });

  it("turns an unknown error into INTERNAL 'internal error' without its text", () => {
    const wire = toWireError(new Error("ER_NO_SUCH_TABLE: secret schema detail"), "req-2");
    expect(wire.code).toBe(13);
    expect(wire.details).toBe("internal error");
    expect(wire.internal).toBe(true);
    const details = decodeStatusDetails(wire.metadata);
    expect(details?.errorInfo?.reason).toBe("INTERNAL");
    expect(JSON.stringify(details)).not.toContain("secret");
    expect(details?.errorInfo?.metadata.request_id).toBe("req-2");
  });

  it("sends a BadRequest field violation naming the field", () => {
    const details = decodeStatusDetails(
      toWireError(planErrors.invalidField("page_size", "must not be negative"), "r").metadata,
    );
    expect(details?.badRequest?.fieldViolations).toEqual([
      {
        field: "page_size",
        description: "must not be negative",
        reason: "INVALID_FIELD",
        localizedMessage: undefined,
      },
    ]);
  });

  it("words a rejected write so that it starts by saying nothing changed and carries the next action", () => {
    const wire = toWireError(planErrors.planTooLarge(300_000, 262_144), "req-1", "Plan was not changed");
    expect(wire.details).toMatch(/^Plan was not changed because the plan would be 300000 bytes/);
    expect(decodeStatusDetails(wire.metadata)?.errorInfo?.metadata.next_action).toContain(
      "Shorten the document",
    );
    // A read is not worded as a write.
    expect(toWireError(planErrors.planNotFound("t-1"), "req-2").details).toMatch(/^Task t-1 has no plan\./);
  });

  it("maps the ports' declared failures itself (nothing translates them on the way)", () => {
    const corrupt = new StorageCorruptionError({
      taskId: "t-1",
      row: "plan",
      recordedBytes: 9,
      storedBytes: 4,
    });
    const cases: [unknown, string | null, number, string, RegExp][] = [
      [
        new StorageConflictError("fence lost"),
        "Plan was not changed",
        status.ABORTED,
        "WRITE_CONFLICT",
        /^Plan was not changed because a concurrent write/,
      ],
      [
        new StorageUnavailableError("down"),
        null,
        status.UNAVAILABLE,
        "STORAGE_UNAVAILABLE",
        /^The plan store is unavailable\./,
      ],
      [
        new CommitOutcomeUnknownError("commit sent, no answer"),
        "Plan was not changed",
        status.UNAVAILABLE,
        "COMMIT_OUTCOME_UNKNOWN",
        /^The write may have been applied: the database did not answer its commit\. Retry with the same request_id, never a new one/,
      ],
      [
        new LockUnavailableError("t-1", 100),
        "Task was not deleted",
        status.UNAVAILABLE,
        "LOCK_UNAVAILABLE",
        /^Task was not deleted because the task's write lock/,
      ],
      [corrupt, null, status.UNAVAILABLE, "PLAN_READ_FAILED", /^The stored content could not be read\./],
      [
        corrupt,
        "Plan was not changed",
        status.UNAVAILABLE,
        "PLAN_READ_FAILED",
        /^Plan was not changed because the stored plan could not be read, so the write was not applied/,
      ],
    ];
    for (const [error, notDone, code, reason, message] of cases) {
      const wire = toWireError(error, "req-3", notDone);
      expect({ code: wire.code, reason: wire.reason, internal: wire.internal }).toEqual({
        code,
        reason,
        internal: false,
      });
      expect(wire.details).toMatch(message);
      expect(decodeStatusDetails(wire.metadata)?.errorInfo?.reason).toBe(reason);
    }
    expect(toWireError(corrupt, "req-4").corrupt).toEqual(corrupt.corrupt);
    // Anything else is INTERNAL, whatever the call.
    expect(toWireError(new Error("boom"), "req-5", "Plan was not changed")).toMatchObject({
      code: status.INTERNAL,
      details: "internal error",
      internal: true,
    });
  });
});
