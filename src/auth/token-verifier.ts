import { createPublicKey, type KeyObject } from "node:crypto";
import { errors as joseErrors, jwtVerify } from "jose";
import { z } from "zod";
import { AuthenticationError } from "./authentication-error";
import type { Caller } from "./caller";

/** How tokens are verified: an HMAC secret (HS256) or a PEM public key (RS256, ES256, EdDSA). */
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
}

/** Turns a bearer token into a Caller or throws AuthenticationError. */
export interface TokenVerifier {
  verify(token: string | null): Promise<Caller>;
}

// Claims the service reads. `kind` and `workspaces` are required so that a token minted for
// another service cannot silently grant reach.
const claimsSchema = z.object({
  sub: z.string().min(1),
  kind: z.enum(["agent", "user"]),
  name: z.string().min(1).max(200).optional(),
  workspaces: z.array(z.string().min(1)).max(1000),
});

/**
 * A verifier for the settings (jose does signature, expiry, nbf, issuer and audience checks; the
 * same clock skew applies to `exp`, `nbf` and `iat`).
 */
export function createTokenVerifier(settings: TokenVerifierSettings): TokenVerifier {
  const key: Uint8Array | KeyObject = settings.secret
    ? new TextEncoder().encode(settings.secret)
    : createPublicKey(settings.publicKeyPem ?? "");
  const algorithms = settings.secret ? ["HS256"] : ["RS256", "ES256", "EdDSA"];
  return {
    async verify(token) {
      if (!token) throw new AuthenticationError("TOKEN_MISSING");
      let payload: unknown;
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms,
          ...(settings.issuer ? { issuer: settings.issuer } : {}),
          ...(settings.audience ? { audience: settings.audience } : {}),
          requiredClaims: ["exp"],
          clockTolerance: settings.clockSkewMs / 1000,
        }));
      } catch (error) {
        throw new AuthenticationError(problemOf(error));
      }
      // jose checks `iat` only against a maximum token age, which we do not impose; a token issued
      // in the future is as suspect as one not valid yet.
      const issuedAt = (payload as { iat?: unknown }).iat;
      if (typeof issuedAt === "number" && issuedAt * 1000 > Date.now() + settings.clockSkewMs)
        throw new AuthenticationError("TOKEN_NOT_YET_VALID");
      const claims = claimsSchema.safeParse(payload);
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

function problemOf(error: unknown): "TOKEN_EXPIRED" | "TOKEN_NOT_YET_VALID" | "TOKEN_INVALID" {
  if (error instanceof joseErrors.JWTExpired) return "TOKEN_EXPIRED";
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === "nbf")
    return "TOKEN_NOT_YET_VALID";
  return "TOKEN_INVALID";
}
