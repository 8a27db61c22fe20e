import { join } from "node:path";
import { pythonVenv, run } from "./client-packages";
import { repoRoot } from "../servers/repo-root";

/**
 * The Python client package's development checks (clients/python/devtests), in a cached virtual
 * environment holding exactly clients/python/requirements-dev.txt: `mypy --strict` on the package and
 * its example (examples/plan_notes.py), and `python -m build` making an sdist and a wheel that each
 * install into a clean virtual environment (dependencies from the package index) and import.
 * The builds write into pytest's temporary directory, not into the source tree.
 */
const ROOT = repoRoot();
const REQUIREMENTS = "clients/python/requirements-dev.txt";

/** Runs the devtests; resolves pytest's output (its last line: "5 passed in ..."). */
export async function testPythonPackage(dir: string): Promise<string> {
  const venv = await pythonVenv("clients-dev", REQUIREMENTS);
  return run(
    [
      join(venv, "bin/python"),
      "-m",
      "pytest",
      "-q",
      "-p",
      "no:cacheprovider",
      `--basetemp=${join(dir, "pytest")}`,
      join(ROOT, "clients/python/devtests"),
    ],
    { cwd: dir, timeoutMs: 900_000 },
  );
}
