import pino, { type DestinationStream, type Logger } from "pino";
import { activeTraceIds } from "./observability/tracing";

// Errors of the database drivers and TypeORM carry their statement and its values (`sql`, `query`,
// `parameters`), which hold plan content: a logged error keeps its type, message, code and stack only.
const STATEMENT_KEYS = new Set(["sql", "query", "parameters", "values"]);

function withoutStatements(value: unknown, depth = 0): unknown {
  if (typeof value !== "object" || value === null || depth > 8) return value;
  if (Array.isArray(value)) return value.map((item) => withoutStatements(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !STATEMENT_KEYS.has(key))
      .map(([key, item]) => [key, withoutStatements(item, depth + 1)]),
  );
}

/** Structured JSON logs, one line per event (to stdout unless given a destination). Plan content is never logged. */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  options: { traceIds?: boolean } = {},
): Logger {
  const settings = {
    level,
    // With tracing on, every line written while a trace is active names it (trace_id, span_id).
    ...(options.traceIds ? { mixin: activeTraceIds } : {}),
    base: { service: "taskplans" },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: (error: unknown) => withoutStatements(pino.stdSerializers.err(error as Error)) },
  };
  return destination ? pino(settings, destination) : pino(settings);
}
