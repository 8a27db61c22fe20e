import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRecord } from "../harness/servers/started-processes";

/**
 * The Galera suite's set-up: only the run's record of started processes (each test starts its own
 * cluster); the integration project's teardown then stops and reports any survivor.
 */
export default function globalSetup(): void {
  openRecord(mkdtempSync(join(tmpdir(), "taskplans-started-")));
}
