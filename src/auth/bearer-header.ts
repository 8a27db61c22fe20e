import { AuthenticationError } from "./authentication-error";

// RFC 6750 section 2.1: credentials = "Bearer" 1*SP b64token (the scheme is case-insensitive,
// RFC 9110 section 11.1). Nothing may precede or follow: a header with trailing spaces is not one.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * The bearer token of a call's `authorization` values: null when there is none (TOKEN_MISSING
 * follows), the token when there is exactly one `Bearer <token>`, and AuthenticationError
 * TOKEN_INVALID for anything else that is present (no scheme, another scheme, surrounding
 * whitespace, several values), because the caller did send credentials, only not usable ones.
 */
export function bearerTokenOf(values: readonly unknown[]): string | null {
  if (values.length === 0) return null;
  const header = values.length === 1 ? values[0] : null;
  const match = typeof header === "string" ? BEARER.exec(header) : null;
  if (!match?.[1]) throw new AuthenticationError("HEADER_MALFORMED");
  return match[1];
}
