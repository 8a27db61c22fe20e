// Exits 0 when node_modules holds exactly what package-lock.json pins, 1 otherwise (scripts/test.sh
// then runs `npm ci`). It compares the lockfile with the record npm writes of every install
// (node_modules/.package-lock.json): same packages at the same versions, optional ones (other
// platforms' binaries) allowed to be absent, and better-sqlite3's native build present.
import { existsSync, readFileSync } from "node:fs";
import process from "node:process";

function packagesOf(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8")).packages ?? null;
  } catch {
    return null;
  }
}

const wanted = packagesOf("package-lock.json");
const installed = packagesOf("node_modules/.package-lock.json");
let current = wanted !== null && installed !== null;
for (const [path, entry] of Object.entries(current ? wanted : {})) {
  if (path === "" || entry.link) continue;
  const have = installed[path];
  if (have === undefined ? !entry.optional : have.version !== entry.version) {
    current = false;
    break;
  }
}
if (current && Object.keys(installed).some((path) => wanted[path] === undefined)) current = false;
current &&= existsSync("node_modules/better-sqlite3/build/Release/better_sqlite3.node");
process.exit(current ? 0 : 1);
