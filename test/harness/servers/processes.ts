import { type ChildProcess, spawn, spawnSync } from "node:child_process";

/** Fails with the command to run when a server binary the tests need is missing. */
export function requireBinary(binary: string, debianPackage: string): void {
  const found = spawnSync("sh", ["-c", `command -v ${binary} || test -x /usr/sbin/${binary}`], {
    encoding: "utf8",
  });
  if (found.status !== 0) {
    throw new Error(
      `${binary} is not installed. Run the README's test command as root (it installs it), or: apt-get install -y ${debianPackage}`,
    );
  }
}

/** Stops exactly this child (by PID): SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(graceMs === 0 ? "SIGKILL" : "SIGTERM");
  if (child.signalCode === null) child.kill("SIGCONT"); // a paused process cannot act on SIGTERM
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls `probe` until it resolves true or `timeoutMs` passes. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** How a command that ran to its end (or was stopped at its time limit) finished. */
export interface CommandResult {
  /** Exit code; null when the time limit killed it. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

/**
 * Runs a command to its end; past `timeoutMs` it is killed (SIGKILL) and `code` is null. Its stdin
 * is `input`, or empty.
 */
export function runToExit(
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number; input?: string | Buffer },
): Promise<CommandResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] ?? "", argv.slice(1), { env: options.env, cwd: options.cwd });
    child.stdin.end(options.input); // without input, a program that reads gets end-of-file, not a wait
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: timedOut ? null : code, stdout, stderr, elapsedMs: Date.now() - started });
    });
  });
}
