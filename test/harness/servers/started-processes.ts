import type { ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// Every long-running process a harness starts is recorded in one directory of the run (set by the
// integration project's global setup), one file per PID, removed when the process exits. What is
// left at the end of the run names a process some test failed to stop: global teardown stops it and
// fails the run. A PID is only ever matched together with its start time, so a PID the system has
// since reused for another process is never touched.
const DIRECTORY_VARIABLE = "TASKPLANS_STARTED_PROCESSES_DIR";

/** The record directory of this run (global setup creates it; children inherit the variable). */
export function openRecord(directory: string): void {
  mkdirSync(directory, { recursive: true });
  process.env[DIRECTORY_VARIABLE] = directory;
}

/** Records `child` (what it is, its PID and start time) until it exits. Outside a test run, does nothing. */
export function tracked<T extends ChildProcess>(child: T, what: string): T {
  const directory = process.env[DIRECTORY_VARIABLE];
  const { pid } = child;
  if (!directory || pid === undefined) return child;
  const file = join(directory, String(pid));
  writeFileSync(file, JSON.stringify({ what, startTime: startTimeOf(pid) }));
  child.once("exit", () => rmSync(file, { force: true }));
  return child;
}

/** Processes recorded in `directory` that still run: stopped here (SIGKILL, by PID) and returned. */
export function stopSurvivors(directory: string): string[] {
  const survivors: string[] = [];
  for (const name of readdirSync(directory)) {
    const pid = Number(name);
    const { what, startTime } = JSON.parse(readFileSync(join(directory, name), "utf8")) as {
      what: string;
      startTime: string | null;
    };
    if (startTime !== null && startTimeOf(pid) === startTime) {
      survivors.push(`${what} (pid ${pid})`);
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone in between
      }
    }
  }
  rmSync(directory, { recursive: true, force: true });
  return survivors;
}

// Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces); null
// when the process is gone or a zombie.
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? null : (fields[19] ?? null);
  } catch {
    return null;
  }
}
