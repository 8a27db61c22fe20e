import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../servers/repo-root";

/** The repository root and the chart (tests run from the source tree). */
export const ROOT = repoRoot();
export const CHART = join(ROOT, "helm", "taskplans");
/** The Kubernetes version the chart is rendered and validated for. */
export const KUBE_VERSION = "1.33.0";

// npm test builds helm with `go install` into this cache outside the repository.
const CACHE_BIN = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "taskplans", "bin");

export function helmBinary(): string {
  return cachedTool("helm");
}

/** A tool npm test installs into the cache (helm, grpcurl), or the one on PATH. */
export function cachedTool(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(":").concat(CACHE_BIN)) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  throw new Error(
    `${name} not found on PATH or in ${CACHE_BIN}: run the README's test command (it installs ${name})`,
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
