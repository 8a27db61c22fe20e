import { startMariaDb } from "./mariadb";

/** Starts one throwaway MariaDB for the integration project; suites create their own databases. */
export default async function globalSetup(): Promise<void> {
  const mariadb = await startMariaDb();
  (globalThis as { __MARIADB__?: unknown }).__MARIADB__ = mariadb;
  // Workers are forked after global setup, so they inherit this.
  process.env.TEST_MARIADB_PORT = String(mariadb.port);
}
