import { type Command, Option } from "commander";
import type { ClientOptions, TaskPlansClient } from "@taskplans/client";
import { connect, type ConnectionOptions } from "./connection";
import { EXIT, failureOf, UsageError } from "./failures";
import { type Format, Output, type Sink } from "./output";

/** What the program reads and writes: the process's, or a test's. */
export interface Io {
  readonly stdout: Sink;
  readonly stderr: Sink;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: NodeJS.ProcessEnv;
  /** Where the exit code goes (process.exitCode). */
  setExitCode(code: number): void;
}

/** The options of every command (docs/planctl.md, "Options of every command"). */
export interface CommonOptions extends ConnectionOptions {
  readonly output: string;
}

/** What a command's handler gets: its printer, the environment, and a client made on first use. */
export interface Runtime {
  readonly out: Output;
  readonly io: Io;
  /** The client, made on the first call (with `extra` laid over the context's options). */
  client(extra?: Partial<ClientOptions>): TaskPlansClient;
}

/** Adds `-o text|json` to a command. */
export function withOutputOption(command: Command): Command {
  return command.addOption(
    new Option("-o, --output <format>", "text or json").choices(["text", "json"]).default("text"),
  );
}

/** Adds `-o`, `--context`, `--target` and `--timeout` to a command that calls the service. */
export function withCommonOptions(command: Command): Command {
  return withOutputOption(command)
    .option("--context <name>", "a saved context (default: PLANCTL_CONTEXT, then `context use`)")
    .option("--target <host:port>", "the service's address (overrides the context; PLANCTL_TARGET)")
    .option("--timeout <ms>", "deadline of each call, every retry included (default 30000)");
}

type Handler = (runtime: Runtime, args: readonly string[], options: Record<string, unknown>) => Promise<void>;

/**
 * The action of a command: runs `handler` with a Runtime, prints any failure on stderr and sets the
 * exit code (0 ok, 1 refused, 2 usage, 3 unavailable), and closes the client it made.
 */
export function act(io: Io, handler: Handler): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const options = command.opts<CommonOptions & Record<string, unknown>>();
    const out = new Output(options.output as Format, io.stdout, io.stderr, io.env);
    let client: TaskPlansClient | undefined;
    const runtime: Runtime = { out, io, client: (extra) => (client ??= connect(options, io.env, extra)) };
    try {
      await handler(runtime, command.args, options);
      io.setExitCode(EXIT.ok);
    } catch (error) {
      const failure = failureOf(error);
      out.failure(failure);
      io.setExitCode(failure.exitCode);
    } finally {
      client?.close();
    }
  };
}

/** A non-negative integer option or argument, or a usage error naming it. */
export function wholeNumber(value: unknown, name: string): number {
  const text = String(value);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`${name} must be a whole number, not "${text}"`);
  return Number(text);
}
