import type { Metadata } from "@grpc/grpc-js";
import { anonymousCaller } from "../auth/caller";
import type { TokenVerifier } from "../auth/token-verifier";
import type { Authenticate } from "./unary";

/**
 * The caller of a call: the anonymous caller without auth, else the verified bearer token from
 * `authorization: Bearer <token>` metadata.
 */
export function authenticator(verifier: TokenVerifier | null): Authenticate {
  if (verifier === null) return async () => anonymousCaller;
  return (metadata: Metadata) => {
    const header = metadata.get("authorization")[0];
    const match = typeof header === "string" ? /^Bearer\s+(\S+)$/i.exec(header.trim()) : null;
    return verifier.verify(match?.[1] ?? null);
  };
}
