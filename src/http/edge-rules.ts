import { isIP } from "node:net";

/**
 * Which `Host` names a listener answers (docs/http.md, "Host and Origin"). A DNS-rebinding page is
 * served from a name its author controls in public DNS and keeps that name in `Host` after the name
 * is pointed at this listener, so answering only known names defeats it (issue 54, defect 4).
 */
export interface HostAllowList {
  /** PLAN_HTTP_ALLOWED_HOSTS=*: every name (the check is off). */
  readonly any: boolean;
  /** Exact names (lower case, no port; IPv6 without brackets). */
  readonly names: ReadonlySet<string>;
  /** Listed `.example.com` entries: that name and every name under it. */
  readonly suffixes: readonly string[];
  /**
   * Bound beyond loopback: IP literals (a kubelet probe, Prometheus and a client by address send the
   * pod IP) and single-label names (a Kubernetes Service name, `helm test`): no public DNS name is
   * either, so no rebinding page can carry one.
   */
  readonly addressesAndSingleLabels: boolean;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

/** True when `host` (a bind address's host part) is reachable only from this machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (name === "localhost" || name === "::1") return true;
  const v4 = name.startsWith("::ffff:") ? name.slice(7) : name;
  return isIP(v4) === 4 && v4.startsWith("127.");
}

/**
 * The allow-list of a listener bound to `bindHost` with `listed` names (PLAN_HTTP_ALLOWED_HOSTS).
 * Always: the loopback names (localhost, 127.0.0.1, ::1) and the bound host itself. Bound beyond
 * loopback (0.0.0.0 in a container, behind a Service): also IP literals and single-label names. The
 * listed names add to these, never replace them.
 */
export function hostAllowList(bindHost: string, listed: readonly string[]): HostAllowList {
  const names = new Set(LOOPBACK_NAMES);
  const bound = normalizeName(bindHost.replace(/^\[|\]$/g, ""));
  if (bound && bound !== "0.0.0.0" && bound !== "::") names.add(bound);
  const suffixes: string[] = [];
  for (const entry of listed) {
    if (entry.startsWith(".")) suffixes.push(normalizeName(entry));
    else if (entry !== "*") names.add(normalizeName(entry.replace(/^\[|\]$/g, "")));
  }
  return {
    any: listed.includes("*"),
    names,
    suffixes,
    addressesAndSingleLabels: !isLoopbackHost(bindHost),
  };
}

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/**
 * The name of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lower case, without
 * its port or a trailing dot; null when it is none of these.
 */
export function hostNameOf(host: string): string | null {
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::\d{1,5})?$/.exec(host);
  if (v6) return isIP(v6[1] ?? "") === 6 ? (v6[1] ?? "").toLowerCase() : null;
  const named = /^([A-Za-z0-9_.-]+?)\.?(?::\d{1,5})?$/.exec(host);
  return named?.[1] ? named[1].toLowerCase() : null;
}

/**
 * Whether a request with this `Host` is answered. The port is not compared: a port-forward or a
 * proxy on another port keeps working, and a rebinding page is told apart by its name. A request
 * without `Host` (HTTP/1.0 tools; no browser sends one without it) passes.
 */
export function hostAllowed(host: string | undefined, allow: HostAllowList): boolean {
  if (host === undefined || allow.any) return true;
  const name = hostNameOf(host);
  if (name === null) return false;
  if (allow.names.has(name)) return true;
  if (allow.suffixes.some((suffix) => name === suffix.slice(1) || name.endsWith(suffix))) return true;
  return allow.addressesAndSingleLabels && (isIP(name) !== 0 || !name.includes("."));
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether a request's `Origin` may send it. Safe methods (GET, HEAD, OPTIONS: reads and CORS
 * preflights) always may; any other method only without `Origin` (a client that is not a browser),
 * from an origin listed in `corsOrigins` (PLAN_HTTP_CORS_ORIGINS, exact), or from the same origin as
 * the request's `Host` (scheme aside: a proxy may end TLS before the listener). `Origin: null`
 * (a sandboxed frame, a file) may not.
 */
export function originAllowed(
  method: string | undefined,
  origin: string | undefined,
  host: string | undefined,
  corsOrigins: readonly string[],
): boolean {
  if (SAFE_METHODS.has((method ?? "GET").toUpperCase()) || origin === undefined) return true;
  if (corsOrigins.includes(origin)) return true;
  if (host === undefined) return false;
  try {
    const from = new URL(origin);
    if (from.origin === "null" || `${from.protocol}//${from.host}` !== origin.toLowerCase()) return false;
    // The Host read with the origin's scheme, so that a default port is left out of both alike.
    return new URL(`${from.protocol}//${host}`).host === from.host;
  } catch {
    return false;
  }
}
