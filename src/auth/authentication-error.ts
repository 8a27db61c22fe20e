/** Why a call with auth on was not authenticated. */
export type AuthenticationReason = "TOKEN_MISSING" | "TOKEN_INVALID" | "TOKEN_EXPIRED";

const MESSAGES: Record<AuthenticationReason, string> = {
  TOKEN_MISSING: "Authentication required: send 'authorization: Bearer <token>' metadata.",
  TOKEN_INVALID: "The bearer token is not valid for this service.",
  TOKEN_EXPIRED: "The bearer token has expired; obtain a new one.",
};

const NEXT_ACTIONS: Record<AuthenticationReason, string> = {
  TOKEN_MISSING: "Send a bearer token issued for this service in 'authorization' call metadata.",
  TOKEN_INVALID: "Send a token issued for this service (check its issuer, audience and signature).",
  TOKEN_EXPIRED: "Obtain a new token and send it.",
};

/** The call carries no usable credentials; nothing was read or changed. */
export class AuthenticationError extends Error {
  /** What the caller should do (ErrorInfo.metadata["next_action"]). */
  readonly nextAction: string;

  constructor(readonly reason: AuthenticationReason) {
    super(MESSAGES[reason]);
    this.name = "AuthenticationError";
    this.nextAction = NEXT_ACTIONS[reason];
  }
}
