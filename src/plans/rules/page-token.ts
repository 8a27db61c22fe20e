import { planErrors } from "../errors";

/**
 * Opaque revision page tokens: the exclusive upper revision number, bound to the task so that a
 * token of another task is rejected rather than silently applied.
 */
export function encodePageToken(taskId: string, beforeNumber: number): string {
  return Buffer.from(JSON.stringify({ t: taskId, b: beforeNumber }), "utf8").toString("base64url");
}

/** The revision number a token starts below, or null for an empty token; INVALID_FIELD otherwise. */
export function decodePageToken(taskId: string, token: string): number | null {
  if (token === "") return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  const { t, b } = (decoded ?? {}) as { t?: unknown; b?: unknown };
  if (t !== taskId || typeof b !== "number" || !Number.isInteger(b) || b < 1) throw invalid();
  return b;
}

function invalid() {
  return planErrors.invalidField("page_token", "is not a token this server issued for this task");
}
