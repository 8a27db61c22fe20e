/** What the console keeps of one CSP violation report (the directive and what it blocked). */
export interface CspReport {
  /** The directive that blocked something, e.g. "script-src-elem" or "img-src". */
  readonly directive: string;
  /** What was blocked: "inline", "eval", "trusted-types-sink" or a URL. */
  readonly blocked: string;
  /** The page's address. */
  readonly documentUri: string;
  /** Up to 40 characters of the blocked code when the browser sends them (agent text: never logged). */
  readonly sample: string;
}

const KEPT = 50;

/** Longest field kept of a report (characters): a report is agent-reachable text, kept bounded. */
export const CSP_FIELD_CHARS = { directive: 64, blocked: 256, documentUri: 256, sample: 40 } as const;
const kept: CspReport[] = [];
let total = 0;
const listeners = new Set<(report: CspReport) => void>();

/**
 * Records a report: the count of reports since start, the newest KEPT of them, and every listener
 * (a logger, a metric) is called. Listeners must not log `sample` or `blocked`, which may hold plan text.
 */
export function recordCspReport(report: CspReport): void {
  total += 1;
  kept.push(report);
  if (kept.length > KEPT) kept.shift();
  for (const listener of listeners) listener(report);
}

/** Reports received since start (their count) and the newest of them, oldest first. */
export function cspReports(): { readonly total: number; readonly recent: readonly CspReport[] } {
  return { total, recent: [...kept] };
}

/** Calls `listener` with every report from now on; returns the function that stops it. */
export function onCspReport(listener: (report: CspReport) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function text(value: unknown, max: number): string {
  return typeof value === "string" ? value.slice(0, max) : "";
}

/**
 * The reports in a body a browser posted: the `report-uri` form (`{"csp-report": {...}}`, content
 * type application/csp-report) or the Reporting API's (`[{"type": "csp-violation", "body": {...}}]`).
 * Anything else gives no report. Each field is cut to CSP_FIELD_CHARS, so what is kept of a
 * report is bounded whatever was posted.
 */
export function parseCspReports(body: string): CspReport[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const bodies: Record<string, unknown>[] = [];
  if (Array.isArray(parsed)) {
    for (const item of parsed as unknown[]) {
      const entry = item as { type?: unknown; body?: unknown } | null;
      if (entry?.type === "csp-violation" && typeof entry.body === "object" && entry.body !== null)
        bodies.push(entry.body as Record<string, unknown>);
    }
  } else if (typeof parsed === "object" && parsed !== null) {
    const inner = (parsed as Record<string, unknown>)["csp-report"];
    if (typeof inner === "object" && inner !== null) bodies.push(inner as Record<string, unknown>);
  }
  const max = CSP_FIELD_CHARS;
  return bodies.map((b) => ({
    directive: text(
      b["effective-directive"] ?? b.effectiveDirective ?? b["violated-directive"],
      max.directive,
    ),
    blocked: text(b["blocked-uri"] ?? b.blockedURL, max.blocked),
    documentUri: text(b["document-uri"] ?? b.documentURL, max.documentUri),
    sample: text(b["script-sample"] ?? b.sample, max.sample),
  }));
}
