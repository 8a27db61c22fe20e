import type { MariaDb } from "./mariadb";

/** Stops the MariaDB that global setup started (by its PID, nothing else). */
export default async function globalTeardown(): Promise<void> {
  const mariadb = (globalThis as { __MARIADB__?: MariaDb }).__MARIADB__;
  await mariadb?.stop();
}
