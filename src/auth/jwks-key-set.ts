import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import type { Logger } from "pino";
import { AuthenticationError } from "./authentication-error";
import { fetchJson, type FetchJsonOptions } from "./fetch-json";

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

/** The key lookup jose verifies with, plus what an operator wants to see. */
export interface JwksKeySet {
  readonly getKey: JWTVerifyGetKey;
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
 * `timeoutMs`, so no call waits on one longer than that; `onFetch` hears each outcome. jose selects
 * and imports the keys.
 */
export function jwksKeySet(
  settings: JwksSettings,
  logger: Logger,
  onFetch: (outcome: JwksFetchOutcome) => void = () => undefined,
): JwksKeySet {
  let keys: { set: ReturnType<typeof createLocalJWKSet>; fetchedAt: number } | null = null;
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
        const set = (await fetchJson(jwksUrl, fetch)) as JSONWebKeySet;
        keys = { set: createLocalJWKSet(set), fetchedAt: Date.now() };
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
    async getKey(header, token) {
      if (!keys && (mayFetch() || pending)) await refresh();
      const current = keys;
      if (!current) throw new AuthenticationError("KEYS_UNAVAILABLE");
      if (Date.now() - current.fetchedAt >= settings.refreshMs && mayFetch()) void refresh();
      try {
        return await current.set(header, token);
      } catch (error) {
        if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
        if (!mayFetch() && !pending) throw new AuthenticationError("TOKEN_KEY_UNKNOWN");
        await refresh();
        try {
          return await (keys ?? current).set(header, token);
        } catch (again) {
          if (again instanceof joseErrors.JWKSNoMatchingKey)
            throw new AuthenticationError("TOKEN_KEY_UNKNOWN");
          throw again;
        }
      }
    },
  };
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
