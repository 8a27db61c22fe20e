/** Why a call with auth on was not authenticated. */
export type AuthenticationReason = "TOKEN_MISSING" | "TOKEN_INVALID" | "TOKEN_EXPIRED";

const MESSAGES: Record<AuthenticationReason, string> = {
  TOKEN_MISSING: "Authentication required: send 'authorization: Bearer <token>' metadata.",
  TOKEN_INVALID: "The bearer token is not valid for this service.",
  TOKEN_EXPIRED: "The bearer token has expired; obtain a new one.",
};

/** The call carries no usable credentials; nothing was read or changed. */
export class AuthenticationError extends Error {
  constructor(readonly reason: AuthenticationReason) {
    super(MESSAGES[reason]);
    this.name = "AuthenticationError";
  }
}
