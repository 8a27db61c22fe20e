import { AuthenticationError } from "../../src/auth/authentication-error";
import { planErrors } from "../../src/plans/errors";
import { toWireError } from "../../src/grpc/error-mapping";
import { decodeStatusDetails } from "../../clients/ts/src/errors";

// Literal codes (grpc.status numbers) so that a change to the table fails here.
const OK_NAMES: Record<number, string> = {
  3: "INVALID_ARGUMENT",
  5: "NOT_FOUND",
  6: "ALREADY_EXISTS",
  7: "PERMISSION_DENIED",
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
    [planErrors.lockUnavailable(), "UNAVAILABLE", "LOCK_UNAVAILABLE"],
    [planErrors.editTextRequired(), "INVALID_ARGUMENT", "EDIT_TEXT_REQUIRED"],
    [planErrors.editTextNotFound(), "FAILED_PRECONDITION", "EDIT_TEXT_NOT_FOUND"],
    [planErrors.editTextNotUnique(2), "FAILED_PRECONDITION", "EDIT_TEXT_NOT_UNIQUE"],
    [planErrors.revisionVersionRequired(), "INVALID_ARGUMENT", "REVISION_VERSION_REQUIRED"],
    [planErrors.revisionChanged(), "ABORTED", "REVISION_CHANGED"],
    [planErrors.offsetOutOfRange(13, 12), "OUT_OF_RANGE", "OFFSET_OUT_OF_RANGE"],
    [planErrors.requestIdReused("r-1"), "INVALID_ARGUMENT", "REQUEST_ID_REUSED"],
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
    const error = planErrors.planTooLarge(300_000, 262_144).asRejectedWrite();
    expect(error.message).toMatch(/^Plan was not changed because the plan would be 300000 bytes/);
    expect(error.metadata.next_action).toContain("Shorten the document");
  });
});
