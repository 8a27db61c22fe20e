/**
 * Runs async jobs one at a time. better-sqlite3 gives TypeORM a single connection, so two
 * overlapping transactions would silently nest as savepoints and a read could see another
 * operation's uncommitted writes; every SQLite operation goes through one queue instead.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `job` after every job queued before it has settled. */
  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job, job);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** No queuing: MySQL connections from the pool are independent. */
export const noQueue = { run: <T>(job: () => Promise<T>): Promise<T> => job() };
