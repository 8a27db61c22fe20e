import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { type CommandResult, runToExit } from "../servers/processes";
import { installTarballs, packWorkspace } from "./workspace-packages";

/**
 * `planctl` as a user gets it: the CLI packed with the contract and the client, installed into an
 * empty project outside the repository, and run as a process with a home of its own (its contexts
 * file lands there, never in the user's).
 */
export interface InstalledPlanctl {
  /** The installed executable (node_modules/.bin/planctl). */
  readonly bin: string;
  /** HOME and XDG_CONFIG_HOME of every run. */
  readonly home: string;
  readonly configHome: string;
  /** The environment of every run (HOME, XDG_CONFIG_HOME, PLANCTL_TARGET), without PATH. */
  readonly env: Readonly<Record<string, string>>;
  /** Runs `planctl args` with stdin `input`, stdout and stderr piped. */
  run(args: readonly string[], options?: RunOptions): Promise<CommandResult>;
  /** Runs `planctl args` on a pseudo-terminal (util-linux `script`): stdout is a TTY, as for a person. */
  runOnTerminal(args: readonly string[], options?: RunOptions): Promise<CommandResult>;
}

export interface RunOptions {
  readonly input?: string | Buffer;
  /** Laid over the run's environment (PATH, HOME, XDG_CONFIG_HOME, PLANCTL_TARGET). */
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;

/** Packs the three workspaces into `work` and installs them into a new project there. */
export async function installPlanctl(work: string, target: string): Promise<InstalledPlanctl> {
  const tarballs: Record<string, string> = {};
  for (const [dir, name] of [
    ["generated", "@taskplans/contract"],
    ["clients/ts", "@taskplans/client"],
    ["cli", "@taskplans/cli"],
  ] as const)
    tarballs[name] = (await packWorkspace(dir, work)).tarball;
  const project = mkdtempSync(join(work, "project-"));
  await installTarballs(project, tarballs);
  const home = mkdtempSync(join(work, "home-"));
  const configHome = join(home, "config");
  mkdirSync(configHome);
  const bin = join(project, "node_modules", ".bin", "planctl");
  const envOf = (options: RunOptions): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: configHome,
    PLANCTL_TARGET: target,
    ...options.env,
  });
  return {
    bin,
    home,
    configHome,
    env: { HOME: home, XDG_CONFIG_HOME: configHome, PLANCTL_TARGET: target },
    run: (args, options = {}) =>
      runToExit([bin, ...args], {
        cwd: home,
        env: envOf(options),
        input: options.input,
        timeoutMs: options.timeoutMs ?? 60_000,
      }),
    runOnTerminal: (args, options = {}) =>
      runToExit(["script", "-qefc", [bin, ...args].map(quote).join(" "), "/dev/null"], {
        cwd: home,
        env: { TERM: "xterm-256color", ...envOf(options) },
        input: options.input,
        timeoutMs: options.timeoutMs ?? 60_000,
      }),
  };
}
