import { createPublicKey, type KeyObject } from "node:crypto";
import {
  decodeProtectedHeader,
  errors as joseErrors,
  type JWSHeaderParameters,
  type JWTPayload,
  type JWTVerifyOptions,
  jwtVerify,
} from "jose";
import { z } from "zod";
import { AuthenticationError, type AuthenticationProblem } from "./authentication-error";
import type { Caller } from "./caller";

/**
 * How tokens are verified: an HMAC secret (HS256), a PEM public key, or the identity provider's
 * published keys (JWKS; the key set is given to createTokenVerifier); RS256, PS256, ES256 and EdDSA
 * for public keys.
 */
export interface TokenVerifierSettings {
  readonly secret: string | null;
  readonly publicKeyPem: string | null;
  readonly issuer: string | null;
  readonly audience: string | null;
  /**
   * How far the issuer's clock may be ahead of or behind ours: `iat` and `nbf` may lie up to this
   * far in the future, and a token stays valid up to this long after its `exp`.
   */
  readonly clockSkewMs: number;
  /** The claims identity is read from (names as the identity provider issues them). */
  readonly claims: ClaimNames;
}

/** Claim names: `sub` is always the subject; these three are configurable. */
export interface ClaimNames {
  /** A list of workspace ids the caller reaches. */
  readonly workspaces: string;
  /** "agent" or "user". */
  readonly kind: string;
  /** A display name (optional in the token; the subject when absent). */
  readonly name: string;
}

export const DEFAULT_CLAIMS: ClaimNames = { workspaces: "workspaces", kind: "kind", name: "name" };

/**
 * The keys a token with this header may be verified with, in order (a key set: jwks-key-set.ts);
 * throws AuthenticationError when there are none.
 */
export type KeyCandidates = (header: JWSHeaderParameters) => Promise<readonly (KeyObject | Uint8Array)[]>;

/** Turns a bearer token into a Caller or throws AuthenticationError. */
export interface TokenVerifier {
  verify(token: string | null): Promise<Caller>;
}

// Claims the service reads. `kind` and `workspaces` are required so that a token minted for
// another service cannot silently grant reach.
const identitySchema = z.object({
  sub: z.string().min(1),
  kind: z.enum(["agent", "user"]),
  name: z.string().min(1).max(200).optional(),
  workspaces: z.array(z.string().min(1)).max(1000),
});

/**
 * A verifier for the settings (jose does signature, expiry, nbf, issuer and audience checks; the
 * same clock skew applies to `exp`, `nbf` and `iat`).
 */
export function createTokenVerifier(
  settings: TokenVerifierSettings,
  keySet: KeyCandidates | null = null,
): TokenVerifier {
  const candidates = keySet ?? fixedKey(settings);
  const algorithms = settings.secret && !keySet ? ["HS256"] : ["RS256", "PS256", "ES256", "EdDSA"];
  const options: JWTVerifyOptions = {
    algorithms,
    ...(settings.issuer ? { issuer: settings.issuer } : {}),
    ...(settings.audience ? { audience: settings.audience } : {}),
    requiredClaims: ["exp"],
    clockTolerance: settings.clockSkewMs / 1000,
  };
  const names = settings.claims;
  return {
    async verify(token) {
      if (!token) throw new AuthenticationError("TOKEN_MISSING");
      let payload: JWTPayload;
      try {
        payload = await verifiedPayload(token, candidates, options);
      } catch (error) {
        throw new AuthenticationError(problemOf(error));
      }
      // jose checks `iat` only against a maximum token age, which we do not impose; a token issued
      // in the future is as suspect as one not valid yet.
      const issuedAt = (payload as { iat?: unknown }).iat;
      if (typeof issuedAt === "number" && issuedAt * 1000 > Date.now() + settings.clockSkewMs)
        throw new AuthenticationError("TOKEN_NOT_YET_VALID");
      const claimed = payload as Record<string, unknown>;
      const claims = identitySchema.safeParse({
        sub: claimed.sub,
        kind: claimed[names.kind],
        name: claimed[names.name],
        workspaces: claimed[names.workspaces],
      });
      if (!claims.success) throw new AuthenticationError("TOKEN_INVALID");
      return {
        authenticated: true,
        subject: claims.data.sub,
        kind: claims.data.kind,
        name: claims.data.name ?? claims.data.sub,
        workspaces: new Set(claims.data.workspaces),
      };
    },
  };
}

// The one key of a secret or a PEM public key.
function fixedKey(settings: TokenVerifierSettings): KeyCandidates {
  const keys = [
    settings.secret
      ? new TextEncoder().encode(settings.secret)
      : createPublicKey(settings.publicKeyPem ?? ""),
  ];
  return () => Promise.resolve(keys);
}

// The token's payload once one of its candidate keys verifies its signature (a token without kid
// may have several); claims are checked with that key. The algorithm is checked first, so a token
// of an algorithm not accepted never makes the key set fetch.
async function verifiedPayload(
  token: string,
  candidates: KeyCandidates,
  options: JWTVerifyOptions,
): Promise<JWTPayload> {
  const header = decodeProtectedHeader(token);
  if (!header.alg || !options.algorithms?.includes(header.alg))
    throw new AuthenticationError("ALGORITHM_NOT_ALLOWED");
  let failure: unknown = new joseErrors.JWSSignatureVerificationFailed();
  for (const key of await candidates(header)) {
    try {
      return (await jwtVerify(token, key, options)).payload;
    } catch (error) {
      if (!(error instanceof joseErrors.JWSSignatureVerificationFailed)) throw error;
      failure = error;
    }
  }
  throw failure;
}

function problemOf(error: unknown): AuthenticationProblem {
  if (error instanceof AuthenticationError) return error.problem; // from the key set
  if (error instanceof joseErrors.JWTExpired) return "TOKEN_EXPIRED";
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "ALGORITHM_NOT_ALLOWED";
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === "nbf")
    return "TOKEN_NOT_YET_VALID";
  return "TOKEN_INVALID";
}
