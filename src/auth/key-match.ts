import type { JWK } from "jose";

/** The most keys one token is tried against (a key set with many keys of one type, token without kid). */
export const MAX_CANDIDATES = 8;

/** The key type (and curve) each accepted algorithm needs. */
const KEY_OF_ALGORITHM: Readonly<Record<string, { kty: string; crv?: string }>> = {
  RS256: { kty: "RSA" },
  PS256: { kty: "RSA" },
  ES256: { kty: "EC", crv: "P-256" },
  EdDSA: { kty: "OKP", crv: "Ed25519" },
};

/**
 * The keys a token may be verified with: `keys` (at most MAX_CANDIDATES, to be tried in order);
 * `unknown`: no key has its kid (or, without kid, none is of its algorithm's type), so a fresh key
 * set may hold it; `algorithm-not-allowed`: the algorithm is not accepted, or the key with its kid
 * (without kid: every key of its type) is published for another algorithm; no fetch changes that.
 */
export type KeyMatch =
  | { readonly kind: "keys"; readonly keys: readonly JWK[] }
  | { readonly kind: "unknown" }
  | { readonly kind: "algorithm-not-allowed" };

/**
 * Picks the keys for a token's header. A key is usable for signatures unless its `use` or
 * `key_ops` say otherwise, and fits an algorithm when its type (and curve) is the one the algorithm
 * needs and its `alg`, when present, names that algorithm. With a kid: the usable keys of that kid
 * that fit; without: every usable key that fits (normal during a rotation overlap).
 */
export function matchKeys(keys: readonly JWK[], header: { alg?: string; kid?: string }): KeyMatch {
  const needed = header.alg === undefined ? undefined : KEY_OF_ALGORITHM[header.alg];
  if (!needed) return { kind: "algorithm-not-allowed" };
  const fits = (key: JWK) =>
    key.kty === needed.kty &&
    (needed.crv === undefined || key.crv === needed.crv) &&
    (key.alg === undefined || key.alg === header.alg);
  const usable = keys.filter(
    (key) =>
      (key.use === undefined || key.use === "sig") &&
      (!Array.isArray(key.key_ops) || key.key_ops.includes("verify")),
  );
  const named = header.kid === undefined ? usable : usable.filter((key) => key.kid === header.kid);
  const fitting = named.filter(fits);
  if (fitting.length > 0) return { kind: "keys", keys: fitting.slice(0, MAX_CANDIDATES) };
  // With a kid, a key under that kid; without, a key of the right type: published for another alg.
  const other = header.kid === undefined ? named.filter((key) => key.kty === needed.kty) : named;
  return other.length > 0 ? { kind: "algorithm-not-allowed" } : { kind: "unknown" };
}
