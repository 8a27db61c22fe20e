import Table from "cli-table3";
import pc from "picocolors";
import type { Failure } from "./failures";
import { safeJson, terminalLine, terminalText } from "./terminal-text";

const BORDER = [
  "top",
  "top-mid",
  "top-left",
  "top-right",
  "bottom",
  "bottom-mid",
  "bottom-left",
  "bottom-right",
  "left",
  "left-mid",
  "mid",
  "mid-mid",
  "right",
  "right-mid",
  "middle",
];

/** How a command prints: `-o text` (default, for people) or `-o json` (for scripts). */
export type Format = "text" | "json";

/** A writable stream as the CLI needs it (process.stdout, or a test's). */
export interface Sink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/**
 * Every print of a command goes through here, so that agent text is made inert on a terminal in one
 * place (STYLE.md habit 16) and `-o json` prints exactly one document per result.
 */
export class Output {
  readonly json: boolean;
  /** Colours for stdout: on a terminal only, never with NO_COLOR or TERM=dumb; FORCE_COLOR forces them. */
  readonly colors: ReturnType<typeof pc.createColors>;

  constructor(
    format: Format,
    private readonly stdout: Sink,
    private readonly stderr: Sink,
    env: NodeJS.ProcessEnv,
  ) {
    this.json = format === "json";
    const enabled =
      !("NO_COLOR" in env) && ("FORCE_COLOR" in env || (stdout.isTTY === true && env.TERM !== "dumb"));
    this.colors = pc.createColors(enabled);
  }

  /** Whether stdout is a terminal (then agent text is sanitized even where a pipe gets it exact). */
  get terminal(): boolean {
    return this.stdout.isTTY === true;
  }

  /** One JSON document on one line (`-o json`); control characters escaped. */
  document(value: unknown): void {
    this.stdout.write(`${safeJson(value)}\n`);
  }

  /** One line of text; each field is made one inert line first. */
  line(...fields: readonly string[]): void {
    this.stdout.write(`${fields.map(terminalLine).join(" ")}\n`);
  }

  /** Text written for pipes (a plan's content): exact to a pipe, sanitized on a terminal. */
  content(text: string): void {
    this.stdout.write(this.terminal ? terminalText(text) : text);
  }

  /** Text already made inert (sanitized, then coloured by this program): written as it is. */
  raw(text: string): void {
    this.stdout.write(text);
  }

  /** Multi-line agent text made inert for a terminal. */
  sanitize(text: string): string {
    return terminalText(text);
  }

  /** A table with a header row; every cell is made one inert line. */
  table(head: readonly string[], rows: readonly (readonly string[])[]): void {
    const table = new Table({
      head: head.map((cell) => this.colors.bold(cell)),
      // Borderless, like kubectl's tables: easy to read, and to cut with awk.
      style: { head: [], border: [], "padding-left": 0, "padding-right": 2 },
      chars: Object.fromEntries(BORDER.map((name) => [name, ""])),
    });
    for (const row of rows) table.push(row.map(terminalLine));
    this.stdout.write(`${table.toString().replace(/ +$/gm, "")}\n`); // no padding after the last column
  }

  /** A failure on stderr: `reason`, message and `next_action` as lines, or one JSON document. */
  failure(failure: Failure): void {
    if (this.json) {
      const { code, reason, message, nextAction, metadata } = failure;
      this.stderr.write(
        `${safeJson({ error: { code, reason, message, next_action: nextAction, metadata } })}\n`,
      );
      return;
    }
    const lines = [`error: ${failure.code}`];
    if (failure.reason) lines.push(`reason: ${failure.reason}`);
    lines.push(`message: ${failure.message}`);
    if (failure.nextAction) lines.push(`next_action: ${failure.nextAction}`);
    this.stderr.write(`${lines.map(terminalLine).join("\n")}\n`);
  }

  /** A note for people on stderr (text mode only): never mixed into what stdout pipes. */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${terminalLine(text)}\n`);
  }
}
