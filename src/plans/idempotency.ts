import { createHash } from "node:crypto";
import { requireId } from "./validate";

/** How long a request id is remembered per task. */
export const REQUEST_ID_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A write's request id and the fingerprint of its payload. */
export interface RequestKey {
  readonly id: string;
  readonly fingerprint: string;
}

/**
 * The key of an agent write that carries a request_id (undefined without one). The fingerprint is
 * a SHA-256 over the RPC name and every field that shapes the write, so a reuse of the id with
 * another payload is detected.
 */
export function requestKey(
  requestId: string | undefined,
  method: string,
  payload: Record<string, unknown>,
): RequestKey | undefined {
  if (requestId === undefined) return undefined;
  const fingerprint = createHash("sha256")
    .update(JSON.stringify([method, payload]))
    .digest("hex");
  return { id: requireId("request_id", requestId), fingerprint };
}

/** Serializes a write result for replay; Date values are tagged so that only they come back as Dates. */
export function encodeReplay(result: unknown): string {
  return JSON.stringify(result, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.toISOString() } : value;
  });
}

/** Parses a stored write result. */
export function decodeReplay<R>(text: string): R {
  return JSON.parse(text, (_key, value: unknown) =>
    typeof value === "object" && value !== null && "$date" in value
      ? new Date(String((value as { $date: unknown }).$date))
      : value,
  ) as R;
}
