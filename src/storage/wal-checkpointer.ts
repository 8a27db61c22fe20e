import { Worker } from "node:worker_threads";
import { checkpointWorker, type WorkerInput, type WorkerMessage } from "./wal-checkpoint-worker";

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

/** What one pass did, as SQLite reports it (frames in the log, frames copied into the database). */
export interface CheckpointPass {
  readonly log: number;
  readonly checkpointed: number;
  /** Whether the log had grown past `restartFrames`, so a RESTART was queued on the main connection. */
  readonly restart: boolean;
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
  private restarting = false;
  private restarted: (() => void) | null = null;
  private restartedAt = -1;
  private gone = false;

  private constructor(
    private readonly main: MainConnection,
    file: string,
    private readonly settings: CheckpointSettings,
    private readonly observer: CheckpointObserver,
    private readonly betweenTransactions: (job: () => Promise<void>) => Promise<void>,
  ) {
    const input: WorkerInput = {
      file,
      intervalMs: settings.intervalMs,
      restartWaitMs: settings.restartWaitMs,
      driver: require.resolve("better-sqlite3"),
    };
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
        this.gone = true;
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
      !this.restarting &&
      !this.gone &&
      this.stopped === null;
    this.observer.onPass?.({ ...done, restart });
    if (!restart) return;
    this.restarting = true;
    this.restartedAt = done.log;
    // A job of the main connection's queue: no transaction of the service is open until it ends,
    // and the event loop goes on serving meanwhile.
    void this.betweenTransactions(
      () =>
        new Promise<void>((resolve) => {
          this.restarted = resolve;
          // A worker that has gone meanwhile answers nothing: the job ends at once.
          if (this.gone) this.restartOver();
          else this.worker.postMessage("restart");
        }),
    );
  }

  // The restart (if one is waited for) is over: done, or the worker gone.
  private restartOver(): void {
    this.restarted?.();
    this.restarted = null;
    this.restarting = false;
  }

  private fallBack(reason: string): void {
    if (this.failed || this.stopped !== null) return;
    this.failed = true;
    this.main.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    this.restartOver();
    this.observer.onFailure(reason);
  }
}
