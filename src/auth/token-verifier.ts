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

/** A verifier for the settings (jose does signature, expiry, issuer and audience checks). */
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
        }));
      } catch (error) {
        throw new AuthenticationError(
          error instanceof joseErrors.JWTExpired ? "TOKEN_EXPIRED" : "TOKEN_INVALID",
        );
      }
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
