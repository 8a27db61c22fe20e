import { basename, join, resolve } from "node:path";

/** A file of the console: its name in the assets directory and its content type. */
export interface ConsoleFile {
  readonly name: string;
  readonly contentType: string;
}

const INDEX: ConsoleFile = { name: "index.html", contentType: "text/html; charset=utf-8" };

/**
 * Every path the console serves, exactly (no decoding, no normalization): a request path is looked up
 * here and anything else is 404, so "..", encoded dots and backslashes never reach the file system.
 */
export const CONSOLE_FILES: ReadonlyMap<string, ConsoleFile> = new Map([
  ["/console", INDEX],
  ["/console/", INDEX],
  ["/console/index.html", INDEX],
  ["/console/console.js", { name: "console.js", contentType: "text/javascript; charset=utf-8" }],
  ["/console/console.css", { name: "console.css", contentType: "text/css; charset=utf-8" }],
  ["/console/favicon.svg", { name: "favicon.svg", contentType: "image/svg+xml" }],
]);

/**
 * The directory `npm run build` writes the console into (dist/console, scripts/build-console.mjs),
 * seen from this file whether it runs built (dist/src/console) or from source (src/console, tests).
 */
export function consoleAssetsDir(here: string = __dirname): string {
  const root = resolve(here, "..", "..");
  return basename(root) === "dist" ? join(root, "console") : join(root, "dist", "console");
}
