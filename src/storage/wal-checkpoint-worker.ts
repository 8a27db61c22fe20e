/** What the worker is given (structured-cloned into it; the settings are wal-checkpointer.ts's). */
export interface WorkerInput {
  readonly file: string;
  readonly intervalMs: number;
  readonly restartWaitMs: number;
  /** The path of better-sqlite3 as the service resolves it, so the worker loads the same build. */
  readonly driver: string;
}

export type WorkerMessage =
  | { readonly pass: { readonly log: number; readonly checkpointed: number } }
  | { readonly restarted: true }
  | { readonly failed: string };

/**
 * The body of the worker thread, run from its source text (a worker needs a JavaScript file or
 * code, and this module also runs as TypeScript under the tests). It uses nothing but what it is
 * given: its own connection to the file, a passive checkpoint every `intervalMs` (which never waits
 * for, nor blocks, a reader or the writer) and a message after every pass, a RESTART checkpoint on
 * "restart" (answered once done). It stops on "stop", or at the first failure, which it reports.
 */
export function checkpointWorker(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- the worker runs from its source text */
  const threads = require("node:worker_threads") as typeof import("node:worker_threads");
  const input = threads.workerData as WorkerInput;
  const port = threads.parentPort;
  const Database = require(input.driver) as typeof import("better-sqlite3");
  /* eslint-enable @typescript-eslint/no-require-imports */
  if (port === null) return;
  const db = new Database(input.file, { fileMustExist: true });
  let timer: NodeJS.Timeout | null = null;
  const close = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (db.open) db.close();
    port.close();
  };
  const failed = (error: unknown) => {
    port.postMessage({ failed: error instanceof Error ? error.message : String(error) });
    close();
  };
  const pass = () => {
    try {
      const [done] = db.pragma("wal_checkpoint(PASSIVE)") as { log: number; checkpointed: number }[];
      port.postMessage({ pass: { log: done?.log ?? 0, checkpointed: done?.checkpointed ?? 0 } });
      timer = setTimeout(pass, input.intervalMs);
    } catch (error) {
      failed(error);
    }
  };
  port.on("message", (message) => {
    if (message === "stop") close();
    if (message !== "restart" || !db.open) return;
    try {
      // The main connection holds back its transactions meanwhile, so the wait for a reader of
      // another process (one that pins older pages of the log) is kept short: if it is still
      // reading, the log is not started over this time, and a later pass asks again.
      db.pragma(`busy_timeout = ${input.restartWaitMs}`);
      db.pragma("wal_checkpoint(RESTART)");
      db.pragma("busy_timeout = 0");
      port.postMessage({ restarted: true });
    } catch (error) {
      failed(error);
    }
  });
  timer = setTimeout(pass, input.intervalMs);
}
