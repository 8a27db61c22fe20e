import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/** The repository root, found from this file (it also runs compiled, from dist-bench/, for the benchmarks). */
export function repoRoot(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "proto", "taskplans"))) return dir;
  }
  throw new Error("repository root not found");
}
