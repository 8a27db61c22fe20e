import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * The Dockerfile's runtime image reproduced as a directory, for machines without a container engine:
 * each stage's instructions are carried out in a directory standing for its WORKDIR, so a file the
 * image forgets to copy, or a runtime import only devDependencies satisfy, fails here as in the image.
 */
export interface RuntimeTree {
  /** The runtime stage's WORKDIR (what the image's /app is). */
  readonly root: string;
  /** The WORKDIR path inside the image (for rewriting absolute paths). */
  readonly workdir: string;
  /** ENV of the runtime stage. */
  readonly env: Readonly<Record<string, string>>;
  /** USER of the runtime stage. */
  readonly uid: number;
  readonly gid: number;
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  /** What the reproduction did differently from a container build, one line each. */
  readonly substitutions: readonly string[];
  remove(): void;
}

interface Instruction {
  readonly op: string;
  readonly args: string;
}

interface Stage {
  readonly name: string;
  readonly instructions: Instruction[];
}

/** Splits a Dockerfile into stages of instructions (comments dropped, continuations joined). */
export function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, op = "", args = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === "FROM") {
      stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? String(stages.length), instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

function sh(command: string, cwd: string): void {
  const run = spawnSync("sh", ["-c", command], { cwd, encoding: "utf8", env: process.env });
  if (run.status !== 0) {
    throw new Error(`Dockerfile RUN '${command}' failed (${run.status}): ${run.stderr.slice(-2000)}`);
  }
}

/**
 * Builds the tree from `dockerfile` with `context` as the build context. The build stage's `npm ci`
 * is replaced by a copy of the context's node_modules (installed by `npm ci` from the same lockfile,
 * which is checked), and apt-get lines are replaced by checking the binaries the image relies on.
 */
export function buildRuntimeTree(context: string, dockerfile = join(context, "Dockerfile")): RuntimeTree {
  const base = mkdtempSync(join(tmpdir(), "taskplans-image-"));
  chmodSync(base, 0o755); // the image's user must be able to enter it
  const stageDirs = new Map<string, { dir: string; workdir: string }>();
  const substitutions: string[] = [];
  let last: {
    dir: string;
    workdir: string;
    env: Record<string, string>;
    user: string;
    entrypoint: string[];
    cmd: string[];
  } | null = null;
  try {
    for (const stage of parseDockerfile(readFileSync(dockerfile, "utf8"))) {
      const dir = join(base, stage.name);
      mkdirSync(dir, { mode: 0o755 });
      const state = {
        dir,
        workdir: "/",
        env: {} as Record<string, string>,
        user: "0:0",
        entrypoint: [] as string[],
        cmd: [] as string[],
      };
      const local = (path: string) => join(dir, relativeTo(state.workdir, path));
      for (const { op, args } of stage.instructions) {
        if (op === "WORKDIR") {
          state.workdir = args;
          mkdirSync(local("."), { recursive: true, mode: 0o755 });
        } else if (op === "ENV") Object.assign(state.env, parseEnv(args));
        else if (op === "USER") state.user = args;
        else if (op === "ENTRYPOINT") state.entrypoint = JSON.parse(args) as string[];
        else if (op === "CMD") state.cmd = JSON.parse(args) as string[];
        else if (op === "COPY") {
          const words = args.split(/\s+/);
          const from = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
          const paths = words.filter((w) => !w.startsWith("--"));
          const target = local(paths.pop() ?? ".");
          const source = from ? stageDirs.get(from) : { dir: context, workdir: "/" };
          if (!source) throw new Error(`COPY --from=${from}: no such stage`);
          for (const path of paths) {
            const origin = join(source.dir, relativeTo(source.workdir, path));
            if (!existsSync(origin))
              throw new Error(`COPY ${path}: not found in ${from ?? "the build context"}`);
            if (!from && excludedByDockerignore(context, relativeTo("/", path)))
              throw new Error(`COPY ${path}: .dockerignore leaves it out of the build context`);
            const into =
              paths.length > 1 || target.endsWith("/") ? join(target, path.split("/").pop() ?? "") : target;
            cpSync(origin, into, { recursive: true, verbatimSymlinks: true });
          }
        } else if (op === "RUN") {
          const command = args.split(state.workdir).join(local("."));
          if (/\bapt-get\b/.test(command)) {
            substitutions.push(`RUN apt-get ...: host packages instead (${requireHostBinaries(command)})`);
          } else if (/\bnpm ci\b/.test(command)) {
            const lockfile = readFileSync(local("package-lock.json"), "utf8");
            if (lockfile !== readFileSync(join(context, "package-lock.json"), "utf8")) {
              throw new Error("the build stage's package-lock.json differs from the context's");
            }
            cpSync(join(context, "node_modules"), local("node_modules"), {
              recursive: true,
              verbatimSymlinks: true,
            });
            substitutions.push(
              "RUN npm ci: a copy of node_modules that `npm ci` installed from the same lockfile",
            );
          } else {
            sh(command, local("."));
          }
        }
      }
      stageDirs.set(stage.name, { dir, workdir: state.workdir });
      last = state;
    }
    if (!last) throw new Error("the Dockerfile has no stage");
    const [uid = "0", gid = uid] = last.user.split(":");
    const runtime = last;
    return {
      root: local(runtime.dir, runtime.workdir),
      workdir: runtime.workdir,
      env: runtime.env,
      uid: Number(uid),
      gid: Number(gid),
      entrypoint: runtime.entrypoint,
      cmd: runtime.cmd,
      substitutions,
      remove: () => rmSync(base, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
}

function local(dir: string, workdir: string): string {
  return join(dir, relativeTo("/", workdir));
}

// An image path (absolute, or relative to the WORKDIR) as a path relative to the stage directory.
function relativeTo(workdir: string, path: string): string {
  const absolute = isAbsolute(path) ? path : join(workdir, path);
  return absolute.replace(/^\/+/, "");
}

function parseEnv(args: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const match of args.matchAll(/(\w+)=("([^"]*)"|\S*)/g))
    env[match[1] ?? ""] = match[3] ?? match[2] ?? "";
  return env;
}

// The image installs binaries the runtime relies on (tini as PID 1): the host must have them.
function requireHostBinaries(command: string): string {
  const packages = (/install\s+(.*?)(&&|$)/.exec(command)?.[1] ?? "")
    .split(/\s+/)
    .filter((word) => word !== "" && !word.startsWith("-"));
  const missing = packages.filter(
    (name) => spawnSync("sh", ["-c", `dpkg -s ${name} >/dev/null 2>&1 || command -v ${name}`]).status !== 0,
  );
  if (missing.length > 0)
    throw new Error(`packages the image installs are missing here: ${missing.join(" ")}`);
  return packages.join(" ");
}

/**
 * Whether the build context's .dockerignore leaves `path` out, for the patterns it uses: a path or
 * folder (`scripts`), `*.ext`, and `!path` taking one back in; the last matching line wins, as in
 * Docker. (A real engine would fail the COPY: the tree here is built from the checkout itself.)
 */
function excludedByDockerignore(context: string, path: string): boolean {
  const file = join(context, ".dockerignore");
  if (!existsSync(file)) return false;
  let excluded = false;
  for (const line of readFileSync(file, "utf8")
    .split("\n")
    .map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const include = line.startsWith("!");
    const pattern = include ? line.slice(1) : line;
    const matches = pattern.startsWith("*.")
      ? path.endsWith(pattern.slice(1))
      : path === pattern || path.startsWith(`${pattern}/`);
    if (matches) excluded = !include;
  }
  return excluded;
}
