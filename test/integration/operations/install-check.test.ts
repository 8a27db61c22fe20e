import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `npm test` installs Node dependencies only when node_modules does not hold what the lockfile pins
// (scripts/node-modules-current.mjs), so the README's `npm ci && npm start` followed by `npm test`
// does not install everything a second time.
const CHECK = join(__dirname, "..", "..", "..", "scripts", "node-modules-current.mjs");
const ROOT = join(__dirname, "..", "..", "..");

const current = (cwd: string) => spawnSync(process.execPath, [CHECK], { cwd }).status;

describe("the install check of npm test", () => {
  it("finds this checkout's node_modules current (npm test ran npm ci, or it was already done)", () => {
    expect(current(ROOT)).toBe(0);
  });

  describe("in a project of its own", () => {
    let dir: string;
    const lock = (packages: Record<string, object>) => JSON.stringify({ lockfileVersion: 3, packages });
    const pinned = {
      "": { name: "p" },
      "node_modules/a": { version: "1.0.0" },
      "node_modules/x": { version: "2.0.0", optional: true },
    };
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), "taskplans-install-"));
      mkdirSync(join(dir, "node_modules", "better-sqlite3", "build", "Release"), { recursive: true });
      writeFileSync(
        join(dir, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"),
        "",
      );
      writeFileSync(join(dir, "package-lock.json"), lock(pinned));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const installed = (packages: Record<string, object>) =>
      writeFileSync(join(dir, "node_modules", ".package-lock.json"), lock(packages));

    it("is current when every pinned package is installed at its version (optional ones may be absent)", () => {
      installed({ "node_modules/a": { version: "1.0.0" } });
      expect(current(dir)).toBe(0);
    });
    it("is not current after an install of other versions", () => {
      installed({ "node_modules/a": { version: "1.0.1" } });
      expect(current(dir)).toBe(1);
    });
    it("is not current with a package the lockfile does not pin", () => {
      installed({ "node_modules/a": { version: "1.0.0" }, "node_modules/b": { version: "1.0.0" } });
      expect(current(dir)).toBe(1);
    });
    it("is not current without an install record or without the native build", () => {
      expect(current(dir)).toBe(1);
      installed({ "node_modules/a": { version: "1.0.0" } });
      rmSync(join(dir, "node_modules", "better-sqlite3"), { recursive: true });
      expect(current(dir)).toBe(1);
    });
  });
});
