import type { Metadata } from "@grpc/grpc-js";
import { bearerTokenOf } from "../auth/bearer-header";
import { anonymousCaller } from "../auth/caller";
import type { TokenVerifier } from "../auth/token-verifier";
import type { Authenticate } from "./call-scope";

/**
 * The caller of a call: the anonymous caller without auth, else the verified bearer token from
 * `authorization: Bearer <token>` metadata (absent: TOKEN_MISSING; present in any other form:
 * TOKEN_INVALID).
 */
export function authenticator(verifier: TokenVerifier | null): Authenticate {
  if (verifier === null) return async () => anonymousCaller;
  return async (metadata: Metadata) => verifier.verify(bearerTokenOf(metadata.get("authorization")));
}
