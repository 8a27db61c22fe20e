import { execFile } from "node:child_process";

/** What the real curl binary got: the HTTP status, the response headers (lower-case names) and the body. */
export interface CurlResult {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: unknown;
}

/**
 * Runs the real `curl` with `args` (the URL among them) and returns what it received. Response
 * headers are written to stdout before the body (`-D -`), the status is taken from them.
 */
export function curl(args: readonly string[], stdin?: string): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "curl",
      ["-sS", "-D", "-", ...args],
      { encoding: "utf8", maxBuffer: 16 * 1024 * 1024, timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error && !stdout)
          return reject(new Error(`curl ${args.join(" ")} failed: ${stderr || error.message}`));
        // The last header block (a 100 Continue comes first when curl sent Expect).
        const blocks = stdout.split("\r\n\r\n");
        let index = 0;
        while (index < blocks.length - 1 && /^HTTP\/\S+ 100/.test(blocks[index] ?? "")) index++;
        const head = blocks[index] ?? "";
        const body = blocks.slice(index + 1).join("\r\n\r\n");
        const [statusLine = "", ...lines] = head.split("\r\n");
        const headers: Record<string, string> = {};
        for (const line of lines) {
          const colon = line.indexOf(":");
          if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: Number(statusLine.split(" ")[1]), headers, body, json });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}
