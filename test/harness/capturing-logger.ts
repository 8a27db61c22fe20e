import { Writable } from "node:stream";
import type pino from "pino";
import { createLogger } from "../../src/logger";

/** The service's logger at info level, whose lines (JSON, one per entry) the test can read. */
export function capturingLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger("info", stream), lines };
}
