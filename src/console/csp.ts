/** Where the page posts the reports of what its Content-Security-Policy blocked. */
export const CSP_REPORT_PATH = "/console/csp-report";

/**
 * The console's Content-Security-Policy. Plans are written by agents and are hostile (STYLE.md habit
 * 16): the rendered markdown is sanitized, and this policy is the second wall should anything slip
 * through. Only the page's own files run and load (`'self'`, no inline script or style, no eval); no
 * plugin, no <base>, no framing, no form posts; HTML reaches the DOM only through DOMPurify's Trusted
 * Types policy ("dompurify"), so a string assigned to innerHTML anywhere else throws instead of
 * parsing. Violations are reported to CSP_REPORT_PATH with `report-uri`, which Chromium sends at once
 * (a `report-to` directive would make it ignore `report-uri` and batch reports for up to a minute).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types dompurify",
  `report-uri ${CSP_REPORT_PATH}`,
].join("; ");

/** Headers of every console response, files, errors and report answers alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  // The page holds a bearer token in memory; nothing of it belongs in a shared cache.
  "cache-control": "no-store",
});
