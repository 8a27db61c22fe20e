import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection } from "mysql2/promise";
import { startMariaDb } from "../../harness/databases/mariadb";
import { runToExit } from "../../harness/servers/processes";

// The entry points exactly as shipped (npm start runs `node dist/src/bin/main.js`; the MCP bin is
// mcp/dist/main.js, built by `npm run build` and `npm run build:packages`), on the embedded SQLite default.
const ROOT = join(__dirname, "..", "..", "..");
const MAIN = join(ROOT, "dist", "src", "bin", "main.js");
const MCP = join(ROOT, "mcp", "dist", "main.js");

/** A port this test holds open on 127.0.0.1, so that whoever else tries to listen on it fails. */
function holdPort(): Promise<{ port: number; server: Server }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve({ port: typeof address === "object" && address ? address.port : 0, server });
    });
  });
}

/** Asserts the process ended non-zero with exactly one stderr line naming `setting` and `address`. */
function expectOneLineNaming(
  run: { code: number | null; stdout: string; stderr: string },
  setting: string,
  address: string,
) {
  expect(run.code).toBe(1); // null would mean it hung until the time limit killed it
  const lines = run.stderr.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(setting);
  expect(lines[0]).toContain(address);
  expect(lines[0]).toContain("EADDRINUSE");
  for (const output of [run.stdout, run.stderr]) expect(output).not.toMatch(/^\s+at /m); // no stack trace
  // Everything else the service wrote is a structured log line (grpc-js's own lines included).
  for (const line of run.stdout.split("\n").filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
}

describe("start-up errors name the setting", () => {
  let dir: string;
  let held: { port: number; server: Server };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "taskplans-startup-"));
    held = await holdPort();
  });
  afterEach(async () => {
    await new Promise((resolve) => held.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const serve = (env: Record<string, string>) =>
    runToExit([process.execPath, MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        PLAN_DATABASE_URL: `sqlite:${join(dir, "x.sqlite")}`,
        PLAN_HTTP_ADDRESS: "127.0.0.1:0",
        ...env,
      },
      cwd: dir,
      timeoutMs: 60_000,
    });

  it("a taken gRPC port ends the server with one line naming PLAN_GRPC_ADDRESS and the address", async () => {
    const address = `127.0.0.1:${held.port}`;
    const run = await serve({ PLAN_GRPC_ADDRESS: address, PLAN_METRICS_ADDRESS: "" });
    expectOneLineNaming(run, "PLAN_GRPC_ADDRESS", address);
  });

  it("a taken metrics port ends the server with one line naming PLAN_METRICS_ADDRESS and the address", async () => {
    const address = `127.0.0.1:${held.port}`;
    const run = await serve({ PLAN_GRPC_ADDRESS: "127.0.0.1:0", PLAN_METRICS_ADDRESS: address });
    expectOneLineNaming(run, "PLAN_METRICS_ADDRESS", address);
  });

  it("a taken HTTP port ends the server with one line naming PLAN_HTTP_ADDRESS and the address", async () => {
    const address = `127.0.0.1:${held.port}`;
    const run = await serve({
      PLAN_GRPC_ADDRESS: "127.0.0.1:0",
      PLAN_METRICS_ADDRESS: "",
      PLAN_HTTP_ADDRESS: address,
    });
    expectOneLineNaming(run, "PLAN_HTTP_ADDRESS", address);
  });

  it("a taken MCP HTTP port ends taskplans-mcp --http with one line naming --http and the address", async () => {
    const run = await runToExit(
      [process.execPath, MCP, "--target", "127.0.0.1:1", "--http", String(held.port)],
      { env: { PATH: process.env.PATH ?? "" }, cwd: dir, timeoutMs: 60_000 },
    );
    expectOneLineNaming(run, "--http", `127.0.0.1:${held.port}`);
    expect(run.stdout).toBe(""); // stdout is the MCP protocol channel
  });
});

// A server of its own: its global sql_mode is changed, which no other test may see.
describe("a MySQL server whose escaping the driver cannot rely on", () => {
  it("NO_BACKSLASH_ESCAPES in the server's sql_mode ends the server and the migration Job with one line naming it", async () => {
    const mariadb = await startMariaDb();
    const dir = mkdtempSync(join(tmpdir(), "taskplans-sqlmode-"));
    try {
      const admin = await createConnection({ host: "127.0.0.1", port: mariadb.port, user: "root" });
      await admin.query("CREATE DATABASE modes");
      await admin.query("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES')");
      await admin.end();
      const env = {
        PATH: process.env.PATH ?? "",
        PLAN_DATABASE_URL: mariadb.urlFor("modes"),
        PLAN_GRPC_ADDRESS: "127.0.0.1:0",
        PLAN_HTTP_ADDRESS: "",
        PLAN_METRICS_ADDRESS: "",
      };
      for (const entry of [MAIN, join(ROOT, "dist", "src", "bin", "migrate.js")]) {
        const run = await runToExit([process.execPath, entry], { env, cwd: dir, timeoutMs: 60_000 });
        expect(run.code).toBe(1);
        const lines = run.stderr.split("\n").filter((line) => line !== "");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain("NO_BACKSLASH_ESCAPES");
        expect(lines[0]).toContain("PLAN_DATABASE_URL");
      }
    } finally {
      await mariadb.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
