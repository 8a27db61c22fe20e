/** Why a call with auth on was not authenticated. */
export type AuthenticationReason = "TOKEN_MISSING" | "TOKEN_INVALID" | "TOKEN_EXPIRED" | "TOKEN_KEY_UNKNOWN";

/**
 * What exactly was wrong. Each problem has its own message, but callers branch on the reason, so a
 * malformed header and a token that is not valid yet are both TOKEN_INVALID.
 */
export type AuthenticationProblem =
  | AuthenticationReason
  | "HEADER_MALFORMED"
  | "TOKEN_NOT_YET_VALID"
  | "KEYS_UNAVAILABLE"
  | "ALGORITHM_NOT_ALLOWED";

const REASONS: Record<AuthenticationProblem, AuthenticationReason> = {
  TOKEN_MISSING: "TOKEN_MISSING",
  TOKEN_INVALID: "TOKEN_INVALID",
  TOKEN_EXPIRED: "TOKEN_EXPIRED",
  HEADER_MALFORMED: "TOKEN_INVALID",
  TOKEN_NOT_YET_VALID: "TOKEN_INVALID",
  TOKEN_KEY_UNKNOWN: "TOKEN_KEY_UNKNOWN",
  KEYS_UNAVAILABLE: "TOKEN_KEY_UNKNOWN",
  ALGORITHM_NOT_ALLOWED: "TOKEN_INVALID",
};

const MESSAGES: Record<AuthenticationProblem, string> = {
  TOKEN_MISSING: "Authentication required: send 'authorization: Bearer <token>' metadata.",
  TOKEN_INVALID: "The bearer token is not valid for this service.",
  TOKEN_EXPIRED: "The bearer token has expired; obtain a new one.",
  HEADER_MALFORMED: "The authorization metadata is not of the form 'Bearer <token>'.",
  TOKEN_NOT_YET_VALID:
    "The bearer token is not valid yet: its iat or nbf lies further in the future than the allowed clock skew.",
  TOKEN_KEY_UNKNOWN:
    "The bearer token is signed by a key the identity provider does not publish (unknown kid).",
  KEYS_UNAVAILABLE:
    "The identity provider's signing keys could not be fetched yet, so the bearer token cannot be verified.",
  ALGORITHM_NOT_ALLOWED:
    "The bearer token's signing algorithm (alg) is not accepted here, or is not the one its key is published for.",
};

const NEXT_ACTIONS: Record<AuthenticationProblem, string> = {
  TOKEN_MISSING: "Send a bearer token issued for this service in 'authorization' call metadata.",
  TOKEN_INVALID: "Send a token issued for this service (check its issuer, audience and signature).",
  TOKEN_EXPIRED: "Obtain a new token and send it.",
  HEADER_MALFORMED:
    "Send exactly 'Bearer', one space and the token in 'authorization' call metadata, with nothing before or after.",
  TOKEN_NOT_YET_VALID: "Check the clocks of the token issuer and of this client, then send a current token.",
  TOKEN_KEY_UNKNOWN:
    "Send a token signed by a current key of the identity provider; right after a key rotation, retry in a minute.",
  KEYS_UNAVAILABLE:
    "Retry in a minute; if it persists, the service cannot reach its identity provider's keys.",
  ALGORITHM_NOT_ALLOWED:
    "Send a token signed with the algorithm its key is published for (the key's alg in the identity provider's key set).",
};

/** The call carries no usable credentials; nothing was read or changed. */
export class AuthenticationError extends Error {
  /** ErrorInfo.reason: what clients branch on. */
  readonly reason: AuthenticationReason;
  /**
   * The problem when it is not the reason itself (ErrorInfo.metadata["cause"], e.g.
   * ALGORITHM_NOT_ALLOWED under TOKEN_INVALID); null otherwise.
   */
  readonly detail: AuthenticationProblem | null;
  /** What the caller should do (ErrorInfo.metadata["next_action"]). */
  readonly nextAction: string;

  constructor(readonly problem: AuthenticationProblem) {
    super(MESSAGES[problem]);
    this.name = "AuthenticationError";
    this.reason = REASONS[problem];
    this.detail = problem === this.reason ? null : problem;
    this.nextAction = NEXT_ACTIONS[problem];
  }
}
