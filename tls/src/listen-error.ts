// The usual reasons a listen fails (Node's error codes), in words an operator can act on.
const CAUSES: Readonly<Record<string, string>> = {
  EADDRINUSE: "the address is already in use (EADDRINUSE): stop what holds it or change",
  EACCES: "permission denied (EACCES; ports below 1024 need privileges): change",
  EADDRNOTAVAIL: "the address is not one of this host's (EADDRNOTAVAIL): change",
  ENOTFOUND: "the host name does not resolve (ENOTFOUND): change",
};

/**
 * A configured listen address could not be used at start-up. Its message is one line naming the
 * setting and the address, so the entry points print it instead of a stack trace and exit non-zero.
 */
export class ListenError extends Error {
  constructor(
    /** The setting that names the address (an environment variable, or a command-line option). */
    readonly setting: string,
    readonly address: string,
    cause: unknown,
  ) {
    super(`cannot listen on ${address} (${setting}): ${reasonOf(cause)} ${setting}`, { cause });
    this.name = "ListenError";
  }
}

// The cause in a few words. grpc-js reports its bind failures as text that contains Node's code.
function reasonOf(cause: unknown): string {
  const text = cause instanceof Error ? cause.message : String(cause);
  const given = (cause as { code?: unknown } | null)?.code;
  const code = typeof given === "string" ? given : /\b(E[A-Z]{4,})\b/.exec(text)?.[1];
  const known = code === undefined ? undefined : CAUSES[code];
  return known ?? `${text.replace(/\s+/g, " ").slice(0, 300)}: change`;
}
