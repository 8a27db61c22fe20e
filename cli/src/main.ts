#!/usr/bin/env node
import { runPlanctl } from "./program";

/** The `planctl` executable: the process's streams and environment, and its exit code. */

// A reader that stops early (`planctl history --all -o json | head -1`) is not an error.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? 0);
  });
runPlanctl(
  {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    setExitCode: () => {},
  },
  process.argv.slice(2),
).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`planctl: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
