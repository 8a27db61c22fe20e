import { spawn } from "node:child_process";
import {
  type ClientOptions,
  createClient,
  type TaskPlansClient,
  type TokenProvider,
} from "@taskplans/client";
import { type Context, readContexts } from "./contexts";
import { UsageError } from "./failures";

/** The options every command takes to find the service (docs/planctl.md, "Contexts"). */
export interface ConnectionOptions {
  readonly context?: string;
  readonly target?: string;
  readonly timeout?: string;
}

/** Where `planctl` connects when nothing says otherwise (the server's default address). */
export const DEFAULT_TARGET = "127.0.0.1:50051";

/**
 * The context in force: `--context`, else PLANCTL_CONTEXT, else the one `context use` chose, else
 * none; then `--target` or PLANCTL_TARGET replaces its target (keeping its TLS and token settings).
 */
export function resolveContext(options: ConnectionOptions, env: NodeJS.ProcessEnv): Context {
  const file = readContexts(env);
  const name = options.context ?? (env.PLANCTL_CONTEXT || undefined) ?? file.current ?? undefined;
  const saved = name === undefined ? undefined : file.contexts[name];
  if (name !== undefined && !saved)
    throw new UsageError(`no context named "${name}" (see: planctl context list)`);
  const target = options.target ?? (env.PLANCTL_TARGET || undefined) ?? saved?.target ?? DEFAULT_TARGET;
  return { ...saved, target };
}

/**
 * A token provider that runs `command` with `sh -c` and answers its stdout, trimmed. Its stderr
 * passes through; its stdout is never printed, and a failure says only how it exited.
 */
export function commandTokenProvider(command: string): TokenProvider {
  return () =>
    new Promise((resolve, reject) => {
      const child = spawn("sh", ["-c", command], { stdio: ["ignore", "pipe", "inherit"] });
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.once("error", () => reject(new Error("the token command could not be started")));
      child.once("close", (code) => {
        const token = stdout.trim();
        if (code === 0 && token !== "") resolve(token);
        else
          reject(
            new Error(
              `the token command exited ${code ?? "by a signal"}${code === 0 ? " with no token" : ""}`,
            ),
          );
      });
    });
}

/** createClient's options for a context: TLS from its files, the token from env, the file or a command. */
export function clientOptionsOf(
  context: Context,
  options: ConnectionOptions,
  env: NodeJS.ProcessEnv,
): ClientOptions {
  if ((context.cert === undefined) !== (context.key === undefined))
    throw new UsageError("a client certificate needs its key: give --cert and --key together");
  const tls =
    context.ca || context.cert || context.serverName
      ? { caFile: context.ca, certFile: context.cert, keyFile: context.key, serverName: context.serverName }
      : undefined;
  const token = env.PLANCTL_TOKEN || context.token;
  const timeoutMs = options.timeout === undefined ? undefined : Number(options.timeout);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0))
    throw new UsageError(`--timeout must be a positive number of milliseconds, not "${options.timeout}"`);
  return {
    tls,
    ...(token
      ? { token }
      : context.tokenCommand
        ? { tokenProvider: commandTokenProvider(context.tokenCommand) }
        : {}),
    ...(timeoutMs === undefined ? {} : { defaultTimeoutMs: timeoutMs }),
  };
}

/** A client for the context in force; `extra` is laid over its options (a command's own retry policy). */
export function connect(
  options: ConnectionOptions,
  env: NodeJS.ProcessEnv,
  extra: Partial<ClientOptions> = {},
): TaskPlansClient {
  const context = resolveContext(options, env);
  return createClient(context.target, { ...clientOptionsOf(context, options, env), ...extra });
}
