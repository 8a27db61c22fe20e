import { CONSOLE_FILES, consoleAssetsDir } from "../../../src/console/console-files";
import { CONTENT_SECURITY_POLICY } from "../../../src/console/csp";
import { parseCspReports } from "../../../src/console/csp-reports";

describe("the console's CSP reports", () => {
  it("are read from the report-uri form a browser posts", () => {
    const body = JSON.stringify({
      "csp-report": {
        "document-uri": "http://127.0.0.1:1/console/",
        "effective-directive": "script-src-elem",
        "violated-directive": "script-src-elem",
        "blocked-uri": "inline",
        "script-sample": "window.__pwned = 1",
      },
    });
    expect(parseCspReports(body)).toEqual([
      {
        directive: "script-src-elem",
        blocked: "inline",
        documentUri: "http://127.0.0.1:1/console/",
        sample: "window.__pwned = 1",
      },
    ]);
  });

  it("are read from the Reporting API's form, and anything else is no report", () => {
    const body = JSON.stringify([
      {
        type: "csp-violation",
        body: { effectiveDirective: "img-src", blockedURL: "https://x.example/p.png" },
      },
      { type: "deprecation", body: {} },
    ]);
    expect(parseCspReports(body).map((r) => [r.directive, r.blocked])).toEqual([
      ["img-src", "https://x.example/p.png"],
    ]);
    expect([parseCspReports("not json"), parseCspReports("{}"), parseCspReports("[1,null]")]).toEqual([
      [],
      [],
      [],
    ]);
  });
});

describe("the console's files and policy", () => {
  it("serve exactly the listed paths, so no request path reaches the file system", () => {
    expect([...CONSOLE_FILES.keys()]).toEqual([
      "/console",
      "/console/",
      "/console/index.html",
      "/console/console.js",
      "/console/console.css",
      "/console/favicon.svg",
    ]);
    expect(CONSOLE_FILES.get("/console/../package.json")).toBeUndefined();
  });

  it("are found in dist/console whether the server runs built or from source", () => {
    expect(consoleAssetsDir("/app/dist/src/console")).toBe("/app/dist/console");
    expect(consoleAssetsDir("/repo/src/console")).toBe("/repo/dist/console");
  });

  it("allow only the page's own files: no inline script, no eval, no plugin, no base, no framing", () => {
    const directives = CONTENT_SECURITY_POLICY.split("; ");
    expect(directives).toEqual(
      expect.arrayContaining([
        "default-src 'self'",
        "script-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "report-uri /console/csp-report",
      ]),
    );
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });
});
