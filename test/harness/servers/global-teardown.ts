import type { MariaDb } from "../databases/mariadb";
import { stopSurvivors } from "./started-processes";

/**
 * Stops the MariaDB that global setup started (by its PID, nothing else), then checks that no
 * process a harness started survives the run: any that does is stopped and fails the run.
 */
export default async function globalTeardown(): Promise<void> {
  const mariadb = (globalThis as { __MARIADB__?: MariaDb }).__MARIADB__;
  await mariadb?.stop();
  const directory = process.env.TASKPLANS_STARTED_PROCESSES_DIR;
  const survivors = directory ? stopSurvivors(directory) : [];
  if (survivors.length > 0) {
    throw new Error(`processes started by the tests were still running at the end: ${survivors.join(", ")}`);
  }
}
