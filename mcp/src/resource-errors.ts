import { status } from "@grpc/grpc-js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { decodeStatusDetails } from "@taskplans/client";
import type { PlanGateway } from "./plan-gateway";
import { CONFIGURE_TOKEN, fromGrpcError } from "./tool-results";

/** JSON-RPC code of "resource not found" (MCP specification, resources: error handling). */
export const RESOURCE_NOT_FOUND = -32002;

/** A resources/read or resources/subscribe of a URI this server does not serve. */
export function unknownResource(uri: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri} is not a plan URI of this server`, {
    uri,
  });
}

/**
 * A failed call of a resource request as a JSON-RPC error: a plan that does not exist, or a task the
 * caller cannot reach (the service discloses nothing more), is -32002 resource not found; a bad
 * cursor or URI -32602; anything else -32603. The message is the one a failed read tool gives (the
 * service's text, its reason and next action), never a stack or storage detail; `data.reason` is
 * the service's ErrorInfo reason, for hosts that branch on it.
 */
export function resourceError(error: unknown, uri?: string): McpError {
  const code = (error as { code?: number }).code;
  const metadata = (error as { metadata?: Parameters<typeof decodeStatusDetails>[0] }).metadata;
  const reason = decodeStatusDetails(metadata)?.errorInfo?.reason ?? status[code ?? status.UNKNOWN];
  const block = fromGrpcError(error, "read").content[0];
  const message = block && "text" in block ? block.text : "The plan was not read.";
  const data = { reason, ...(uri ? { uri } : {}) };
  if (code === status.NOT_FOUND || code === status.PERMISSION_DENIED)
    return new McpError(RESOURCE_NOT_FOUND, message, data);
  if (code === status.INVALID_ARGUMENT) return new McpError(ErrorCode.InvalidParams, message, data);
  return new McpError(ErrorCode.InternalError, message, data);
}

/** Throws when the configured token cannot be sent (checked before every call, as the tools do). */
export function refuseUnsendableToken(plans: PlanGateway): void {
  const problem = plans.tokenProblem();
  if (problem)
    throw new McpError(ErrorCode.InvalidRequest, `${problem}. ${CONFIGURE_TOKEN}`, {
      reason: "TOKEN_INVALID",
    });
}
