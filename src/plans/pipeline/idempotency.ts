import { createHash } from "node:crypto";
import type { Caller } from "../../auth/caller";
import type { Author } from "../rules/author";

/** How long a request id is remembered per task. */
export const REQUEST_ID_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A write's request id, the key it is remembered under, and the fingerprint of its payload. */
export interface RequestKey {
  /** The request_id as the caller sent it (for messages). */
  readonly id: string;
  /** What the id is stored under: scoped to the caller, so two callers never share an id. */
  readonly storedId: string;
  readonly fingerprint: string;
}

/**
 * Whose request ids a write's id belongs to: the token subject with auth on; without auth (request
 * authors are trusted) the author the write is attributed to.
 */
export function requestIdOwner(caller: Caller, author: Author): string {
  return caller.authenticated && caller.subject
    ? `subject:${caller.subject}`
    : `author:${author.kind}:${author.name}`;
}

const sha256 = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");

/**
 * The key of an agent write that carries a request_id (undefined without one). The id comes as its
 * caller checked it, in the order of the request's checks (validate.ts optionalId). It is scoped to
 * `owner` (requestIdOwner): another caller's write with the same id is a different request. The
 * fingerprint is a SHA-256 over the RPC name and every field that shapes the write, so a reuse of
 * the id with another payload is detected.
 */
export function requestKey(
  requestId: string | undefined,
  owner: string,
  method: string,
  payload: Record<string, unknown>,
): RequestKey | undefined {
  if (requestId === undefined) return undefined;
  return { id: requestId, storedId: sha256([owner, requestId]), fingerprint: sha256([method, payload]) };
}
