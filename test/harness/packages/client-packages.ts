import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runToExit } from "../servers/processes";
import { repoRoot } from "../servers/repo-root";
import { packWorkspace } from "./workspace-packages";

/**
 * Each client package used the way a back end outside the repository uses it: the TypeScript package
 * packed and installed from its tarball, the Go module through a path `replace`, the Python package
 * installed with pip from a copy. Each consumer is the conformance program of its language.
 */
const ROOT = repoRoot();
const CONFORMANCE = join(ROOT, "clients/conformance");

/** Runs a command to completion; throws with its output when it fails. Resolves its stdout. */
export async function run(
  argv: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  const result = await runToExit(argv, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    timeoutMs: options.timeoutMs ?? 600_000,
  });
  if (result.code !== 0)
    throw new Error(`${argv.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

export interface PackedClient {
  readonly tarball: string;
  /** Paths inside the tarball. */
  readonly files: readonly string[];
  /** The contract's tarball (@taskplans/contract), the client's one dependency of this repository. */
  readonly contract: string;
}

/**
 * Packs clients/ts with `npm pack` into `dir`, and the contract it depends on: each package builds
 * itself (prepack, `tsc -b`), so what is packed is always the build of the sources.
 */
export async function packTsClient(dir: string): Promise<PackedClient> {
  const contract = await packWorkspace("generated", dir);
  const client = await packWorkspace("clients/ts", dir);
  return { ...client, contract: contract.tarball };
}

/**
 * A Node project in `dir` depending on the client's tarball (and the contract's, which a registry
 * would provide); resolves the argv that runs its conformance program.
 */
export async function prepareTsConsumer(dir: string, packed: PackedClient): Promise<string[]> {
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  cpSync(join(CONFORMANCE, "ts/conformance.ts"), join(dir, "conformance.ts"));
  const manifest = {
    name: "taskplans-conformance-ts",
    private: true,
    dependencies: {
      "@taskplans/client": `file:${packed.tarball}`,
      "@taskplans/contract": `file:${packed.contract}`,
      "@grpc/grpc-js": root.dependencies["@grpc/grpc-js"],
    },
    devDependencies: {
      typescript: root.devDependencies.typescript,
      "@types/node": root.devDependencies["@types/node"],
    },
  };
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "ES2022", module: "commonjs", strict: true, types: ["node"], outDir: "out" },
      files: ["conformance.ts"],
    }),
  );
  await run(["npm", "install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: dir });
  // Type-checks the program against the package's own .d.ts files, as CommonJS (and builds it), then
  // under the module settings TypeScript 7 leaves (node16/nodenext and bundler resolution).
  await run(["npx", "tsc", "-p", "tsconfig.json"], { cwd: dir });
  for (const [module, moduleResolution] of [
    ["nodenext", "nodenext"],
    ["esnext", "bundler"],
  ] as const)
    await run(
      [
        "npx",
        "tsc",
        "-p",
        "tsconfig.json",
        "--noEmit",
        "--module",
        module,
        "--moduleResolution",
        moduleResolution,
      ],
      {
        cwd: dir,
      },
    );
  return ["node", join(dir, "out/conformance.js")];
}

/** A Go module in `dir` requiring clients/go by a path replace; resolves the built conformance binary. */
export async function prepareGoConsumer(dir: string): Promise<string[]> {
  for (const file of ["main.go", "go.mod", "go.sum"]) cpSync(join(CONFORMANCE, "go", file), join(dir, file));
  await run(
    ["go", "mod", "edit", `-replace=github.com/taskplans/taskplans/clients/go=${join(ROOT, "clients/go")}`],
    { cwd: dir },
  );
  await run(["go", "build", "-o", "conformance", "."], { cwd: dir, env: { GOFLAGS: "-mod=mod" } });
  return [join(dir, "conformance")];
}

/**
 * The cached virtual environment `name` holding exactly `requirements` (scripts/python-env.sh makes
 * it once per requirements file's content); resolves its directory.
 */
export async function pythonVenv(name: string, requirements: string): Promise<string> {
  return (await run(["bash", "scripts/python-env.sh", name, requirements])).trim().split("\n").pop() ?? "";
}

export interface PythonEnv {
  readonly python: string;
  readonly pip: string;
}

/**
 * A cached virtual environment holding exactly `requirements` (clients/python/requirements-*.txt),
 * with the package installed from a copy in `dir`; `pip check` proves the installed versions satisfy
 * the package's declared dependencies.
 */
export async function preparePythonEnv(name: string, requirements: string, dir: string): Promise<PythonEnv> {
  const venv = await pythonVenv(name, requirements);
  const env = { python: join(venv, "bin/python"), pip: join(venv, "bin/pip") };
  const source = join(dir, "taskplans-client");
  cpSync(join(ROOT, "clients/python"), source, {
    recursive: true,
    filter: (path) => !/(__pycache__|\.egg-info|\/build)$/.test(path),
  });
  await run([
    env.pip,
    "install",
    "--quiet",
    "--disable-pip-version-check",
    "--no-deps",
    "--force-reinstall",
    source,
  ]);
  await run([env.pip, "check", "--disable-pip-version-check"]);
  return env;
}
