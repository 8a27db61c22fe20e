import { Worker } from "node:worker_threads";

/** When the background checkpoints run. */
export interface CheckpointSettings {
  /** Time between two passive checkpoints (ms), counted from the end of one to the start of the next. */
  readonly intervalMs: number;
  /**
   * WAL frames (4 KiB pages) past which the worker runs a RESTART checkpoint while the main
   * connection holds back its next transaction, so the log starts over. Passive checkpoints copy
   * the log but cannot start it over while commits follow each other more closely than a
   * checkpoint takes (its sync included), which is the case under steady writes.
   */
  readonly restartFrames: number;
  /**
   * How long a RESTART waits for a reader in another process (the service's own reads are held
   * back with its transactions); the service waits as long, so it is kept short.
   */
  readonly restartWaitMs: number;
}

export const DEFAULT_CHECKPOINT_SETTINGS: CheckpointSettings = Object.freeze({
  intervalMs: 200,
  restartFrames: 4_096,
  restartWaitMs: 100,
});

/** What the worker is given (structured-cloned into it). */
interface WorkerInput extends CheckpointSettings {
  readonly file: string;
  /** The path of better-sqlite3 as the service resolves it, so the worker loads the same build. */
  readonly driver: string;
}

/** What one pass did, as SQLite reports it (frames in the log, frames copied into the database). */
export interface CheckpointPass {
  readonly log: number;
  readonly checkpointed: number;
  /** Whether the log had grown past `restartFrames`, so a RESTART was queued on the main connection. */
  readonly restart: boolean;
}

type WorkerMessage =
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
function checkpointWorker(): void {
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

/** The main connection's setting, restored when the checkpoints cannot run in the background. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/** The service's own connection to the database (better-sqlite3's). */
export interface MainConnection {
  pragma(statement: string): unknown;
}

/** Who hears what the checkpoints do. */
export interface CheckpointObserver {
  readonly onPass?: (pass: CheckpointPass) => void;
  readonly onFailure: (reason: string) => void;
}

/**
 * Checkpoints an SQLite database's write-ahead log on a worker thread. better-sqlite3 runs every
 * statement on the event loop, and by default the commit that fills the log past 1,000 pages copies
 * them into the database and syncs it there: most of an append's time on the embedded default, and
 * more the larger the file (the copied pages lie further apart). Here the main connection does not
 * checkpoint on commit (`wal_autocheckpoint = 0`); a second connection on a worker thread runs
 * passive checkpoints, which never block the writer. When the log reaches `restartFrames`, the
 * main connection holds back its next transaction (`betweenTransactions`, without blocking the event
 * loop) while the worker runs a RESTART checkpoint, which copies what the passive ones have not yet
 * and starts the log over. If the worker fails, the main connection checkpoints on commit again as
 * before, and `onFailure` is told.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  private stopped: Promise<void> | null = null;
  private failed = false;
  private restarted: (() => void) | null = null;
  private restartedAt = -1;

  private constructor(
    private readonly main: MainConnection,
    file: string,
    private readonly settings: CheckpointSettings,
    private readonly observer: CheckpointObserver,
    private readonly betweenTransactions: (job: () => Promise<void>) => Promise<void>,
  ) {
    const input: WorkerInput = { ...settings, file, driver: require.resolve("better-sqlite3") };
    this.worker = new Worker(`(${checkpointWorker.toString()})()`, { eval: true, workerData: input });
    this.worker.unref();
    this.worker.on("message", (message: WorkerMessage) => {
      if ("pass" in message) this.passed(message.pass);
      else if ("restarted" in message) this.restartOver();
      else this.fallBack(message.failed);
    });
    this.worker.on("error", (error) => this.fallBack(error.message));
    this.exited = new Promise((resolve) =>
      this.worker.once("exit", () => {
        if (this.stopped === null) this.fallBack("the checkpoint worker exited");
        this.restartOver();
        resolve();
      }),
    );
  }

  /**
   * Starts checkpointing `file` (an SQLite database in WAL mode, which `main` is connected to) in
   * the background. `betweenTransactions` runs a job on `main` when no transaction is open on it.
   */
  static start(
    main: MainConnection,
    file: string,
    settings: CheckpointSettings,
    observer: CheckpointObserver,
    betweenTransactions: (job: () => Promise<void>) => Promise<void> = (job) => job(),
  ): WalCheckpointer {
    main.pragma("wal_autocheckpoint = 0");
    return new WalCheckpointer(main, file, settings, observer, betweenTransactions);
  }

  /** Stops the worker (its connection closes); the main connection's own close checkpoints the rest. */
  stop(): Promise<void> {
    if (this.stopped === null) {
      // Held open until the worker has closed its connection (the worker alone does not keep it open).
      this.worker.ref();
      this.worker.postMessage("stop");
      this.stopped = this.exited;
    }
    return this.stopped;
  }

  private passed(done: { readonly log: number; readonly checkpointed: number }): void {
    // A log that has not grown since it was restarted is not restarted again (it starts over at the
    // next commit; until then SQLite reports its old length).
    const restart =
      done.log >= this.settings.restartFrames &&
      done.log !== this.restartedAt &&
      this.restarted === null &&
      this.stopped === null;
    this.observer.onPass?.({ ...done, restart });
    if (!restart) return;
    // A job of the main connection's queue: no transaction of the service is open until it ends,
    // and the event loop goes on serving meanwhile.
    void this.betweenTransactions(
      () =>
        new Promise<void>((resolve) => {
          this.restartedAt = done.log;
          this.restarted = resolve;
          this.worker.postMessage("restart");
        }),
    );
  }

  // The restart (if one is waited for) is over: done, or the worker gone.
  private restartOver(): void {
    this.restarted?.();
    this.restarted = null;
  }

  private fallBack(reason: string): void {
    if (this.failed || this.stopped !== null) return;
    this.failed = true;
    this.main.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    this.restartOver();
    this.observer.onFailure(reason);
  }
}
