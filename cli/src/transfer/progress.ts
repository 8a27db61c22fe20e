import { SingleBar } from "cli-progress";
import type { Sink } from "../output";

/** What a transfer has done so far. */
export interface Done {
  readonly tasks: number;
  readonly revisions: number;
  readonly bytes: number;
}

/** A progress bar of an export or import on stderr: tasks, revisions, MiB, rate and ETA. */
export interface Progress {
  update(done: Done): void;
  stop(): void;
}

const MIB = 1024 * 1024;

/**
 * A cli-progress bar on stderr when stderr is a terminal (and NO_PROGRESS is not set); nothing
 * otherwise, so that pipes and logs get no control sequences. The ETA is over tasks.
 */
export function progressBar(
  label: string,
  totalTasks: number,
  stderr: Sink,
  env: NodeJS.ProcessEnv,
): Progress {
  if (stderr.isTTY !== true || "NO_PROGRESS" in env)
    return { update: () => undefined, stop: () => undefined };
  const started = performance.now();
  const bar = new SingleBar({
    stream: stderr as NodeJS.WriteStream,
    format: `${label} {bar} {value}/{total} tasks | {revisions} revisions | {mib} MiB | {rate} MiB/s | ETA {eta_formatted}`,
    hideCursor: true,
    clearOnComplete: false,
    etaBuffer: 50,
    fps: 5,
  });
  bar.start(totalTasks, 0, { revisions: 0, mib: "0.0", rate: "0.0" });
  return {
    update(done) {
      const seconds = Math.max((performance.now() - started) / 1000, 0.001);
      bar.update(done.tasks, {
        revisions: done.revisions,
        mib: (done.bytes / MIB).toFixed(1),
        rate: (done.bytes / MIB / seconds).toFixed(1),
      });
    },
    stop: () => bar.stop(),
  };
}
