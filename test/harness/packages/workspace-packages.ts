import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runToExit } from "../servers/processes";
import { repoRoot } from "../servers/repo-root";

/**
 * The npm workspaces beside the service (root package.json "workspaces"), packed and installed the
 * way a project outside the repository gets them: `npm pack`, then `npm install` of the tarballs.
 */
const ROOT = repoRoot();

/** Each workspace's folder and package name, in dependency order (the contract first). */
export const WORKSPACES = [
  { dir: "tls", name: "@taskplans/tls" },
  { dir: "generated", name: "@taskplans/contract" },
  { dir: "clients/ts", name: "@taskplans/client" },
  { dir: "mcp", name: "@taskplans/mcp" },
  { dir: "cli", name: "@taskplans/cli" },
] as const;

export interface PackedWorkspace {
  readonly tarball: string;
  /** Paths inside the tarball. */
  readonly files: readonly string[];
}

async function npm(args: readonly string[], cwd: string): Promise<string> {
  const result = await runToExit(["npm", ...args], { cwd, env: process.env, timeoutMs: 600_000 });
  if (result.code !== 0)
    throw new Error(`npm ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * `npm pack ./<dir>` into `into`. The package builds itself first (prepack: `tsc -b`, which rebuilds
 * only what changed), so the tarball holds the build of the sources; the build in place is kept,
 * because processes other tests start run it.
 */
export async function packWorkspace(dir: string, into: string): Promise<PackedWorkspace> {
  const out = await npm(["pack", `./${dir}`, "--pack-destination", into, "--json"], ROOT);
  const [info] = JSON.parse(out.slice(out.indexOf("["))) as { filename: string; files: { path: string }[] }[];
  if (!info) throw new Error(`npm pack printed nothing: ${out}`);
  return { tarball: join(into, info.filename), files: info.files.map((f) => f.path) };
}

/**
 * An empty project in `dir` that installs `tarballs` (package name -> tarball) and the peer
 * dependency @grpc/grpc-js at the service's version, with nothing else of the repository.
 */
export async function installTarballs(
  dir: string,
  tarballs: Readonly<Record<string, string>>,
): Promise<void> {
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const dependencies: Record<string, string> = { "@grpc/grpc-js": root.dependencies["@grpc/grpc-js"] ?? "" };
  for (const [name, tarball] of Object.entries(tarballs)) dependencies[name] = `file:${tarball}`;
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "outside-consumer", private: true, dependencies }, null, 2),
  );
  await npm(["install", "--prefer-offline", "--no-audit", "--no-fund"], dir);
}
