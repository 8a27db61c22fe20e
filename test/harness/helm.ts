import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

/** The repository root and the chart (tests run from the source tree). */
export const ROOT = join(__dirname, "..", "..");
export const CHART = join(ROOT, "helm", "taskplans");
/** The Kubernetes version the chart is rendered and validated for. */
export const KUBE_VERSION = "1.33.0";

// npm test builds helm with `go install` into this cache outside the repository.
const CACHE_BIN = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "taskplans", "bin");

export function helmBinary(): string {
  for (const dir of (process.env.PATH ?? "").split(":").concat(CACHE_BIN)) {
    if (existsSync(join(dir, "helm"))) return join(dir, "helm");
  }
  throw new Error(
    `helm not found on PATH or in ${CACHE_BIN}: run the README's test command (it installs helm)`,
  );
}

/** Runs the real helm binary. */
export function helm(...args: string[]): { status: number; stdout: string; stderr: string } {
  const run = spawnSync(helmBinary(), args, { encoding: "utf8" });
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

/** `helm template rel <chart> ...args` as parsed objects; throws with helm's stderr on failure. */
export function renderChart<T = Record<string, unknown>>(...args: string[]): T[] {
  const out = helm("template", "rel", CHART, "--kube-version", KUBE_VERSION, ...args);
  if (out.status !== 0 || out.stderr !== "") throw new Error(`helm template failed: ${out.stderr}`);
  return parseAllDocuments(out.stdout)
    .map((d) => d.toJS() as T)
    .filter(Boolean);
}
