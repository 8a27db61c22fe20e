import type { Caller } from "../../auth/caller";
import type { AuthorKind } from "../ports/records";
import { checkDisplayName } from "./validate";

/** Who a write is attributed to. */
export interface Author {
  readonly kind: AuthorKind;
  readonly name: string;
}

/** An author as a request states it (kind or name may be missing). */
export interface RequestedAuthor {
  readonly kind?: AuthorKind | undefined;
  readonly name?: string | undefined;
}

/**
 * The author of a write. With auth the verified token decides and a request author is ignored;
 * without auth the request's author is used, defaulting to the path's kind (agent path: agent,
 * editor path: user) and the name "Agent" or "User".
 */
export function resolveAuthor(
  caller: Caller,
  requested: RequestedAuthor | undefined,
  pathKind: AuthorKind,
): Author {
  const { author, requestedName } = authorOf(caller, requested, pathKind);
  if (requestedName !== null) checkDisplayName("author.name", requestedName);
  return author;
}

/**
 * resolveAuthor without its check: the author, and the name the request gave (trimmed), which
 * checkDisplayName must accept; null when the token decides.
 */
export function authorOf(
  caller: Caller,
  requested: RequestedAuthor | undefined,
  pathKind: AuthorKind,
): { readonly author: Author; readonly requestedName: string | null } {
  if (caller.authenticated && caller.kind && caller.name)
    return { author: { kind: caller.kind, name: caller.name }, requestedName: null };
  const kind = requested?.kind ?? pathKind;
  const name = requested?.name?.trim() ?? "";
  return { author: { kind, name: name || defaultName(kind) }, requestedName: name };
}

function defaultName(kind: AuthorKind): string {
  return kind === "agent" ? "Agent" : "User";
}
