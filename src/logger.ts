import pino, { type Logger } from "pino";

/** Structured JSON logs, one line per event. Plan content is never logged. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "taskplans" }, timestamp: pino.stdTimeFunctions.isoTime });
}
