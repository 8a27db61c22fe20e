import { readFileSync } from "node:fs";
import { join } from "node:path";

// @taskplans/mcp ships alone, so it carries a copy of the service's certificate reloading
// (mcp/src/tls/). The copies must not drift: each is the service's file, imports aside (and, for
// tls-files, the config type it declares itself; for periodic, `every` only).
const ROOT = join(__dirname, "..", "..");
const COPIES: Record<string, string> = {
  "tls-files.ts": "src/tls/tls-files.ts",
  "certificate-validity.ts": "src/tls/certificate-validity.ts",
  "https-server.ts": "src/tls/https-server.ts",
  "setting-file.ts": "src/config/setting-file.ts",
  "config-error.ts": "src/config/config-error.ts",
  "listen-error.ts": "src/config/listen-error.ts",
  "periodic.ts": "src/background/periodic.ts",
};

function body(path: string): string {
  return readFileSync(join(ROOT, path), "utf8")
    .replace(/^\/\/ A copy of the service's[^\n]*\n\/\/[^\n]*\n/, "")
    .replace(/^import [^\n]*\n/gm, "")
    .replace(/\/\*\* The files a listener serves[\s\S]*?\n}\n\n/, "")
    .trim();
}

describe("the MCP package's copies of the service's TLS modules", () => {
  it.each(Object.entries(COPIES))("mcp/src/tls/%s is %s, imports aside", (copy, original) => {
    const mine = body(join("mcp/src/tls", copy));
    if (copy === "periodic.ts") expect(body(original).startsWith(mine)).toBe(true);
    else expect(mine).toBe(body(original));
  });
});
