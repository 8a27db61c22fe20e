/** Who is calling. With auth on it comes from a verified token; without, everything is reachable. */
export interface Caller {
  /** False when the server runs without auth (embedded default): request fields name the author. */
  readonly authenticated: boolean;
  /** Token subject. */
  readonly subject: string | null;
  /** Kind of caller from the token. */
  readonly kind: "agent" | "user" | null;
  /** Display name from the token. */
  readonly name: string | null;
  /** Workspaces whose tasks the caller reaches; "all" without auth. */
  readonly workspaces: ReadonlySet<string> | "all";
}

/** The caller of a server without auth: trusted, reaches every task. */
export const anonymousCaller: Caller = Object.freeze({
  authenticated: false,
  subject: null,
  kind: null,
  name: null,
  workspaces: "all",
});

/** True when `caller` may act on a task of `workspaceId`. */
export function reachesWorkspace(caller: Caller, workspaceId: string): boolean {
  return caller.workspaces === "all" || caller.workspaces.has(workspaceId);
}
