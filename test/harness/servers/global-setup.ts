import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMariaDb } from "../databases/mariadb";
import { openRecord } from "./started-processes";

/** Starts one throwaway MariaDB for the integration project; suites create their own databases. */
export default async function globalSetup(): Promise<void> {
  // Workers are forked after global setup, so they inherit both variables.
  openRecord(mkdtempSync(join(tmpdir(), "taskplans-started-")));
  const mariadb = await startMariaDb();
  (globalThis as { __MARIADB__?: unknown }).__MARIADB__ = mariadb;
  process.env.TEST_MARIADB_PORT = String(mariadb.port);
}
