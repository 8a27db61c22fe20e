/** Reasons of requests rejected before decoding: the bytes on the wire are not a valid message. */
export type RequestReason = "MALFORMED_REQUEST" | "INVALID_UTF8";

/**
 * A request whose wire bytes could not be read as its message (truncated, wrong wire type, a 64-bit
 * number beyond what the service represents exactly) or whose string fields are not UTF-8. Raised
 * before authentication and before anything is read or written.
 */
export class RequestError extends Error {
  constructor(
    readonly reason: RequestReason,
    /** The field in proto notation (e.g. `author.name`), or null when the framing itself is broken. */
    readonly field: string | null,
    readonly detail: string,
    /** What to do instead; by default, for protobuf on the wire. */
    remedy = reason === "INVALID_UTF8"
      ? "Send string fields as valid UTF-8 and retry."
      : "Send a well-formed protobuf message (use the generated client) and retry.",
  ) {
    super(`Request was not processed because ${detail}. ${remedy}`);
    this.name = "RequestError";
  }
}
