import { Counter, type Registry } from "prom-client";

/** What happened to a CSP report body posted to the console (docs/console.md). */
export type CspReportOutcome = "recorded" | "unauthenticated" | "rate_limited" | "too_large" | "malformed";

/** The counters of the HTTP listeners' edge: refused requests and the console's CSP reports. */
export interface HttpEdgeCounters {
  refused(listener: "http" | "metrics", rule: "host" | "origin"): void;
  cspReport(outcome: CspReportOutcome): void;
}

const OUTCOMES: readonly CspReportOutcome[] = [
  "recorded",
  "unauthenticated",
  "rate_limited",
  "too_large",
  "malformed",
];

/**
 * taskplans_http_edge_refusals_total{listener, rule} (requests refused for their Host or Origin:
 * a name the listener does not answer, or a cross-origin write) and
 * taskplans_console_csp_reports_total{outcome} (report bodies by what became of them). Every series
 * is exported from the start at 0, so alerts and dashboards find them on a quiet replica.
 */
export function httpEdgeCounters(registry: Registry): HttpEdgeCounters {
  const refusals = new Counter({
    name: "taskplans_http_edge_refusals_total",
    help: "HTTP requests refused before any handler for their Host (a name not allowed) or Origin (a cross-origin write)",
    labelNames: ["listener", "rule"],
    registers: [registry],
  });
  const reports = new Counter({
    name: "taskplans_console_csp_reports_total",
    help: "CSP report bodies posted to the console, by outcome (recorded, unauthenticated, rate_limited, too_large, malformed)",
    labelNames: ["outcome"],
    registers: [registry],
  });
  for (const listener of ["http", "metrics"])
    for (const rule of ["host", "origin"]) refusals.inc({ listener, rule }, 0);
  for (const outcome of OUTCOMES) reports.inc({ outcome }, 0);
  return {
    refused: (listener, rule) => refusals.inc({ listener, rule }),
    cspReport: (outcome) => reports.inc({ outcome }),
  };
}
