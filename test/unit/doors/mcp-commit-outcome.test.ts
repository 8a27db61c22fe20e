import { Metadata, status } from "@grpc/grpc-js";
import { encodeStatusDetails, ERROR_DOMAIN } from "@taskplans/contract";
import { fromGrpcError } from "@taskplans/mcp";
import { toWireError } from "../../../src/grpc/error-mapping";
import { CommitOutcomeUnknownError, StorageUnavailableError } from "../../../src/plans/ports/store-errors";

// What an agent is told when the service answers a write UNAVAILABLE COMMIT_OUTCOME_UNKNOWN (issue
// 54, defect 11): that the change may be in the plan, and that only the same request_id is safe.
const asServiceError = (error: unknown) => {
  const wire = toWireError(error, "rid-1", "Plan was not changed");
  return { code: wire.code, details: wire.details, metadata: wire.metadata };
};
const textOf = (result: ReturnType<typeof fromGrpcError>) =>
  result.content.map((block) => ("text" in block ? block.text : "")).join("\n");

describe("the MCP server's answer to a write whose outcome is unknown", () => {
  it("says the write may have been applied and tells the agent to retry with the same request_id", () => {
    const result = fromGrpcError(asServiceError(new CommitOutcomeUnknownError("lost")), "write");
    const text = textOf(result);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/^The write may have been applied: the database did not answer its commit\./);
    expect(text).not.toMatch(/Plan was not changed/);
    expect(text).toMatch(
      /reason=COMMIT_OUTCOME_UNKNOWN; next_action=The change may already be in the plan\./,
    );
    expect(text).toMatch(/same request_id, never a new one/);
    expect(text).toMatch(/if you gave no request_id, read the plan with get_task_plan first/);
  });

  it("STORAGE_UNAVAILABLE still says the plan was not changed", () => {
    const text = textOf(fromGrpcError(asServiceError(new StorageUnavailableError("down")), "write"));
    expect(text).toMatch(/^Plan was not changed because the plan store is unavailable\./);
    expect(text).toMatch(/reason=STORAGE_UNAVAILABLE/);
  });

  it("reads its reason from ErrorInfo, not from the message", () => {
    const metadata: Metadata = encodeStatusDetails({
      code: status.UNAVAILABLE,
      message: "anything",
      errorInfo: { reason: "COMMIT_OUTCOME_UNKNOWN", domain: ERROR_DOMAIN, metadata: {} },
      badRequest: null,
      retryInfo: null,
    });
    const text = textOf(
      fromGrpcError({ code: status.UNAVAILABLE, details: "anything", metadata }, "mergeable"),
    );
    expect(text).toMatch(/next_action=The change may already be in the plan/);
  });
});
