import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "./failures";

/** One saved connection: where the service is, how to trust it, where a token comes from. */
export interface Context {
  readonly target: string;
  /** PEM files (paths), read when a command connects. */
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  /** The name the server's certificate carries, when not the target's host. */
  readonly serverName?: string;
  /** A shell command whose stdout is the bearer token, run before every attempt that needs one. */
  readonly tokenCommand?: string;
  /** A token the user gave literally (`context add --token`): the only way a token is written. */
  readonly token?: string;
}

/** The contexts file: every saved context and the one `context use` chose. */
export interface ContextsFile {
  readonly current: string | null;
  readonly contexts: Readonly<Record<string, Context>>;
}

const EMPTY: ContextsFile = { current: null, contexts: {} };

/** `$XDG_CONFIG_HOME/taskplans/contexts.json`, or `~/.config/taskplans/contexts.json`. */
export function contextsPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "taskplans", "contexts.json");
}

/** The saved contexts; none when the file does not exist yet. */
export function readContexts(env: NodeJS.ProcessEnv): ContextsFile {
  const path = contextsPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return EMPTY;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ContextsFile>;
    return { current: parsed.current ?? null, contexts: parsed.contexts ?? {} };
  } catch {
    throw new UsageError(`${path} is not valid JSON: fix or remove it`);
  }
}

/**
 * Writes the contexts file readable by its owner only (mode 0600, its folder 0700): it may name a
 * token command or hold a literal token. Written to a temporary file first, then renamed, so a
 * crash never leaves half a file.
 */
export function writeContexts(env: NodeJS.ProcessEnv, file: ContextsFile): void {
  const path = contextsPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600); // the mode above is masked by the umask; this is not
  renameSync(temporary, path);
}
