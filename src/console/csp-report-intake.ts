import type { Logger } from "pino";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { CspReportOutcome } from "../observability/http-edge-metrics";
import { LogWindow } from "../observability/log-window";
import { type CspReport, parseCspReports, recordCspReport } from "./csp-reports";

/** The bounds of the CSP report endpoint (docs/console.md, "CSP reports"). */
export interface CspIntakeLimits {
  /** Report bodies one client address may post per window. */
  readonly perAddress: number;
  /** Report bodies this replica takes per window, from every address together. */
  readonly perReplica: number;
  readonly windowMs: number;
  /** Reports read from one body (the Reporting API batches them); the rest are dropped. */
  readonly reportsPerBody: number;
  /** The log's window: its first report at once, then one line of counts (log-window.ts). */
  readonly logWindowMs: number;
}

/** 30 bodies a minute per address, 300 per replica, 10 reports a body, a line of counts a minute. */
export const DEFAULT_CSP_LIMITS: CspIntakeLimits = Object.freeze({
  perAddress: 30,
  perReplica: 300,
  windowMs: 60_000,
  reportsPerBody: 10,
  logWindowMs: 60_000,
});

/** What the intake needs: how to authenticate a report, and where its counts go. */
export interface CspIntakeOptions {
  /**
   * Null with auth off: every report is recorded. With auth on: whether the request's
   * `authorization` header holds a valid bearer token; reports without one are counted
   * (`unauthenticated`), never recorded or logged.
   */
  readonly authenticate: ((authorization: string | undefined) => Promise<boolean>) | null;
  readonly logger: Logger;
  /** Counts a body by outcome (taskplans_console_csp_reports_total). */
  readonly count?: (outcome: CspReportOutcome) => void;
  readonly limits?: Partial<CspIntakeLimits>;
}

/** Whether a body may be read: with who sent it, or after how long to come back. */
export type CspAdmission =
  | { readonly admitted: true; readonly authenticated: boolean }
  | { readonly admitted: false; readonly retryAfterMs: number };

// A directive as a log key: a CSP directive name, else "other" (the log's keys stay few and short).
const DIRECTIVE = /^[a-z-]{1,40}$/;

/**
 * The rules of the console's CSP report endpoint (issue 54, defect 5), apart from its HTTP framing
 * (serve.ts): a rate limit per client address and per replica (rate-limiter-flexible, in memory),
 * auth when auth is on, at most `reportsPerBody` reports a body, and a bounded log: the first
 * report of a window as one line (its directive and, when a keyword, what was blocked; never a URL
 * or a sample, which may be agent text), the rest as one line of counts by directive when the
 * window closes. What is kept in memory is csp-reports.ts's bounded list.
 */
export class CspReportIntake {
  private readonly limits: CspIntakeLimits;
  private readonly perAddress: RateLimiterMemory;
  private readonly perReplica: RateLimiterMemory;
  private readonly log: LogWindow<CspReport>;

  constructor(private readonly options: CspIntakeOptions) {
    this.limits = { ...DEFAULT_CSP_LIMITS, ...options.limits };
    const duration = this.limits.windowMs / 1000;
    this.perAddress = new RateLimiterMemory({ points: this.limits.perAddress, duration });
    this.perReplica = new RateLimiterMemory({ points: this.limits.perReplica, duration });
    this.log = new LogWindow<CspReport>({
      windowMs: this.limits.logWindowMs,
      first: (report) =>
        options.logger.warn(
          {
            directive: logKey(report),
            blocked: /^[a-z-]{1,40}$/.test(report.blocked) ? report.blocked : "url",
          },
          "console CSP violation reported",
        ),
      summary: ({ more, byKey, windowMs }) =>
        options.logger.warn(
          { reports: more, byDirective: byKey, windowMs },
          "more console CSP violations reported",
        ),
    });
  }

  /** Counts a body refused for its size (413). */
  tooLarge(): void {
    this.options.count?.("too_large");
  }

  /** Takes one body of `address` from the rate limits, then checks its token when auth is on. */
  async admit(address: string, authorization: string | undefined): Promise<CspAdmission> {
    try {
      await this.perAddress.consume(address);
      await this.perReplica.consume("replica");
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      this.options.count?.("rate_limited");
      return { admitted: false, retryAfterMs: Math.max(1, Math.ceil(refusal.msBeforeNext)) };
    }
    const authenticated = this.options.authenticate
      ? await this.options.authenticate(authorization).catch(() => false)
      : true;
    return { admitted: true, authenticated };
  }

  /** Records the reports of an admitted body (the first `reportsPerBody` of them). */
  accept(body: string, authenticated: boolean): void {
    if (!authenticated) return this.options.count?.("unauthenticated");
    const reports = parseCspReports(body).slice(0, this.limits.reportsPerBody);
    this.options.count?.(reports.length > 0 ? "recorded" : "malformed");
    for (const report of reports) {
      recordCspReport(report);
      this.log.add(logKey(report), report);
    }
  }

  /** Writes the log's pending line of counts. */
  close(): void {
    this.log.close();
  }
}

function logKey(report: CspReport): string {
  return DIRECTIVE.test(report.directive) ? report.directive : "other";
}
