import { createPublicKey, type JsonWebKey, type KeyObject } from "node:crypto";
import type { JWK, JWSHeaderParameters } from "jose";
import type { Logger } from "pino";
import { AuthenticationError } from "./authentication-error";
import { fetchJson, type FetchJsonOptions } from "./fetch-json";
import { matchKeys } from "./key-match";

/** Where the identity provider's signing keys are published, and how often to read them. */
export interface JwksSettings {
  /** The JWK Set's https URL; null: found by OIDC discovery from `discoveryIssuer`. */
  readonly url: string | null;
  /** The issuer whose `/.well-known/openid-configuration` names the JWK Set (`jwks_uri`). */
  readonly discoveryIssuer: string | null;
  /** A PEM CA bundle trusted for these fetches besides the system's (a private identity provider). */
  readonly ca: Buffer | null;
  /** Keys older than this are fetched again in the background; the cached ones keep working meanwhile. */
  readonly refreshMs: number;
  /** At most one fetch per this interval, however many tokens name a key the set does not hold. */
  readonly cooldownMs: number;
  /** One fetch (discovery and the key set together) fails once it has taken this long. */
  readonly timeoutMs: number;
}

/** What a fetch ended with (`ok`: a key set is in use now). */
export type JwksFetchOutcome = "ok" | "failed";

/** The keys a token may be verified with, plus what an operator wants to see. */
export interface JwksKeySet {
  /**
   * The keys to try for a token with this header, in order (key-match.ts picks them); throws
   * AuthenticationError TOKEN_KEY_UNKNOWN, KEYS_UNAVAILABLE or ALGORITHM_NOT_ALLOWED.
   */
  keysFor(header: JWSHeaderParameters): Promise<readonly KeyObject[]>;
  /** Fetches made so far (successful or not). */
  fetches(): number;
  /** Fetches the keys now (at start, so the first call does not wait); never rejects. */
  prefetch(): Promise<void>;
}

/**
 * The identity provider's keys, cached. A token whose `kid` the cache lacks triggers a fetch unless
 * one was tried within `cooldownMs` (so a flood of unknown `kid`s makes at most one request per
 * cooldown, whether the provider is up or down); stale keys are fetched again in the background. A
 * failed fetch keeps the cached keys: tokens signed by them keep working while the provider is down,
 * and others fail UNAUTHENTICATED TOKEN_KEY_UNKNOWN. A fetch ends, fetched or failed, within
 * `timeoutMs`, so no call waits on one longer than that; `onFetch` hears each outcome. A token whose
 * algorithm its key is not published for is ALGORITHM_NOT_ALLOWED at once: no fetch changes that.
 */
export function jwksKeySet(
  settings: JwksSettings,
  logger: Logger,
  onFetch: (outcome: JwksFetchOutcome) => void = () => undefined,
): JwksKeySet {
  let keys: FetchedKeys | null = null;
  let triedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | null = null;
  let fetches = 0;
  let jwksUrl = settings.url;

  const refresh = (): Promise<void> => {
    pending ??= (async () => {
      triedAt = Date.now();
      fetches++;
      const fetch = { ca: settings.ca, deadline: triedAt + settings.timeoutMs };
      try {
        jwksUrl ??= await discover(settings.discoveryIssuer, fetch);
        const set = (await fetchJson(jwksUrl, fetch)) as { keys?: unknown } | null;
        if (!Array.isArray(set?.keys)) throw new Error(`${jwksUrl} did not send a JWK Set`);
        const jwks = (set.keys as unknown[]).filter(
          (key): key is JWK => typeof key === "object" && key !== null,
        );
        keys = { jwks, imported: new Map(), fetchedAt: Date.now() };
        logger.info({ url: jwksUrl, keys: set.keys.length }, "JWKS fetched");
        onFetch("ok");
      } catch (error) {
        onFetch("failed");
        logger.warn(
          {
            url: jwksUrl ?? settings.discoveryIssuer,
            reason: (error as Error).message,
            cached: keys !== null,
          },
          "JWKS fetch failed; the cached keys stay in use",
        );
      } finally {
        pending = null;
      }
    })();
    return pending;
  };
  const mayFetch = () => Date.now() - triedAt >= settings.cooldownMs;

  return {
    fetches: () => fetches,
    prefetch: refresh,
    async keysFor(header) {
      if (!keys && (mayFetch() || pending)) await refresh();
      const current = keys;
      if (!current) throw new AuthenticationError("KEYS_UNAVAILABLE");
      if (Date.now() - current.fetchedAt >= settings.refreshMs && mayFetch()) void refresh();
      let found = current;
      let match = matchKeys(found.jwks, header);
      if (match.kind === "unknown" && (mayFetch() || pending)) {
        await refresh();
        found = keys ?? current;
        match = matchKeys(found.jwks, header);
      }
      if (match.kind === "algorithm-not-allowed") throw new AuthenticationError("ALGORITHM_NOT_ALLOWED");
      const usable = match.kind === "keys" ? importAll(found, match.keys) : [];
      if (usable.length === 0) throw new AuthenticationError("TOKEN_KEY_UNKNOWN");
      return usable;
    },
  };
}

interface FetchedKeys {
  readonly jwks: readonly JWK[];
  /** Each key imported once per fetched set (null: not a key Node can import). */
  readonly imported: Map<JWK, KeyObject | null>;
  readonly fetchedAt: number;
}

function importAll(set: FetchedKeys, jwks: readonly JWK[]): KeyObject[] {
  const usable: KeyObject[] = [];
  for (const jwk of jwks) {
    if (!set.imported.has(jwk)) {
      let key: KeyObject | null = null;
      try {
        key = createPublicKey({ key: jwk as JsonWebKey, format: "jwk" });
      } catch {
        // A malformed key in the set: the others may still verify.
      }
      set.imported.set(jwk, key);
    }
    const key = set.imported.get(jwk);
    if (key) usable.push(key);
  }
  return usable;
}

async function discover(discoveryIssuer: string | null, fetch: FetchJsonOptions): Promise<string> {
  const issuer = (discoveryIssuer ?? "").replace(/\/+$/, "");
  const document = (await fetchJson(`${issuer}/.well-known/openid-configuration`, fetch)) as {
    jwks_uri?: unknown;
  };
  if (typeof document.jwks_uri !== "string" || !document.jwks_uri.startsWith("https://"))
    throw new Error(`${issuer}/.well-known/openid-configuration names no https jwks_uri`);
  return document.jwks_uri;
}
