import { randomUUID } from "node:crypto";
import { type handleUnaryCall, Metadata, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Caller } from "../auth/caller";
import type { PlanMetrics } from "../observability/metrics";
import { withCallDeadline } from "../plans/call-deadline";
import { toWireError } from "./error-mapping";

/** Per-call facts a handler receives. */
export interface CallContext {
  readonly caller: Caller;
  readonly requestId: string;
}

/** Resolves the caller from call metadata (throws AuthenticationError when auth is on and fails). */
export type Authenticate = (metadata: Metadata) => Promise<Caller>;

/** What every handler wrapper needs. */
export interface UnaryDeps {
  readonly authenticate: Authenticate;
  readonly logger: Logger;
  readonly metrics: PlanMetrics;
  /** Calls slower than this are logged at warn level. */
  readonly slowCallMs: number;
}

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Wraps a handler: request id (from x-request-id or generated, echoed in response metadata),
 * caller, one structured log line per call (never plan content), and error mapping. Handlers only
 * translate; they never choose a status code.
 */
export function unary<Req extends object, Res>(
  method: string,
  deps: UnaryDeps,
  handler: (request: Req, context: CallContext) => Promise<Res>,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const given = call.metadata.get("x-request-id")[0];
    const requestId = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    const echoed = new Metadata();
    echoed.set("x-request-id", requestId);
    call.sendMetadata(echoed);
    const started = performance.now();
    const taskId = "taskId" in call.request ? String(call.request.taskId) : undefined;
    const log = { method, requestId, taskId };
    const deadline = Number(call.getDeadline()); // Infinity when the client set none
    deps
      .authenticate(call.metadata)
      .then((caller) => withCallDeadline(deadline, () => handler(call.request, { caller, requestId })))
      .then(
        (response) => {
          const ms = performance.now() - started;
          deps.metrics.rpc(method, "OK", ms / 1000);
          const entry = { ...log, code: "OK", ms: Math.round(ms) };
          if (ms > deps.slowCallMs) deps.logger.warn(entry, "slow rpc");
          else deps.logger.info(entry, "rpc");
          callback(null, response);
        },
        (error: unknown) => {
          const wire = toWireError(error, requestId);
          const ms = performance.now() - started;
          deps.metrics.rpc(method, status[wire.code], ms / 1000);
          deps.metrics.rejection(wire.reason);
          const entry = { ...log, code: status[wire.code], reason: wire.reason, ms: Math.round(ms) };
          if (wire.internal) deps.logger.error({ ...entry, err: error }, "rpc failed unexpectedly");
          else if (ms > deps.slowCallMs) deps.logger.warn(entry, "slow rpc");
          else deps.logger.info(entry, "rpc rejected");
          callback({ code: wire.code, details: wire.details, metadata: wire.metadata });
        },
      );
  };
}
