import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command, CommanderError } from "commander";
import { addContextCommands } from "./commands/context-commands";
import { addExportCommand } from "./commands/export-command";
import { addImportCommand } from "./commands/import-command";
import { addHistoryCommands } from "./commands/history-commands";
import { addPlanCommands } from "./commands/plan-commands";
import { addTaskCommands } from "./commands/task-commands";
import { addWatchCommand } from "./commands/watch-command";
import { completionScript, type Shell } from "./completion";
import { EXIT } from "./failures";
import type { Io } from "./runtime";

/** This package's version, read from its package.json (packed beside dist/), shown by `planctl --version`. */
export const VERSION: string = (
  JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as { version: string }
).version;

/**
 * The `planctl` program: every command, parsed by commander. Usage errors exit 2, help and
 * `--version` exit 0 (docs/planctl.md, "Exit codes").
 */
export function buildProgram(io: Io): Command {
  const program = new Command("planctl")
    .description(
      "the task-plan service on the command line: tasks, plans, history, diffs, watch, export/import",
    )
    .version(VERSION, "-V, --version")
    .enablePositionalOptions() // `get --version` is get's own option, not the program's
    .showHelpAfterError("(planctl <command> --help for usage)")
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride()
    // Names only in the list of commands (each command's --help shows its arguments), so the
    // program's help fits one screen.
    .configureHelp({ subcommandTerm: (command) => command.name() })
    .addHelpText(
      "after",
      "\nEvery command takes -o json, --context, --target and --timeout.\nExit codes: 0 ok, 1 refused (reason on stderr), 2 usage, 3 unavailable.",
    );
  addContextCommands(program, io);
  addTaskCommands(program, io);
  addPlanCommands(program, io);
  addHistoryCommands(program, io);
  addWatchCommand(program, io);
  addExportCommand(program, io);
  addImportCommand(program, io);
  program
    .command("completion")
    .description("print a shell completion script (bash, zsh or fish)")
    .argument("<shell>", "bash, zsh or fish")
    .action((shell: string) => {
      if (!["bash", "zsh", "fish"].includes(shell)) {
        program.error(`completion: unknown shell "${shell}" (bash, zsh or fish)`, { exitCode: EXIT.usage });
      }
      io.stdout.write(completionScript(program, shell as Shell));
    });
  // Every subcommand reports its usage errors through the program's output and override.
  const inherit = (command: Command) => {
    for (const sub of command.commands) {
      sub
        .exitOverride()
        .configureOutput(program.configureOutput())
        .showHelpAfterError(`(planctl ${sub.name()} --help for usage)`);
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

/** Parses `argv` (without node and the script) and runs it; resolves to the exit code. */
export async function runPlanctl(io: Io, argv: readonly string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram({ ...io, setExitCode: (code) => (exitCode = code) });
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Help and --version "fail" with code 0; a missing command shows help and fails with 1.
    const shown = ["commander.helpDisplayed", "commander.version", "commander.help"].includes(error.code);
    return shown ? EXIT.ok : EXIT.usage;
  }
  return exitCode;
}
