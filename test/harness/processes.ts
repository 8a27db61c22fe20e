import { type ChildProcess, spawnSync } from "node:child_process";

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
