import { randomUUID } from "node:crypto";
import { type handleUnaryCall, Metadata, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Caller } from "../auth/caller";
import type { PlanMetrics } from "../observability/metrics";
import { planErrors } from "../plans/errors";
import { isWellFormedId } from "../plans/validate";
import { CORRUPT_CONTENT, toWireError } from "./error-mapping";
import type { WriteRateLimit } from "./write-rate-limit";
import type { ReceivedRequest } from "./received-request";

/** Per-call facts a handler receives. */
export interface CallContext {
  readonly caller: Caller;
  readonly requestId: string;
  /** The client's deadline (epoch ms); Infinity when it set none. Writes bound their lock wait by it. */
  readonly deadline: number;
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
  /** Per-caller limit of write calls (RESOURCE_EXHAUSTED RATE_LIMITED with RetryInfo). */
  readonly writeRateLimit: WriteRateLimit;
}

/**
 * The methods that write: each counts against the caller's write rate limit, and its refusal by the
 * limit says what did not happen (CreateTask and DeleteTask are not plan writes).
 */
export const WRITE_METHODS: ReadonlyMap<string, string> = new Map([
  ["CreateTask", "Task was not created"],
  ["DeleteTask", "Task was not deleted"],
  ["CreatePlan", "Plan was not changed"],
  ["UpdatePlan", "Plan was not changed"],
  ["EditPlan", "Plan was not changed"],
  ["RestorePlanRevision", "Plan was not changed"],
  ["SavePlan", "Plan was not changed"],
  ["DeletePlan", "Plan was not changed"],
  ["RevertPlan", "Plan was not changed"],
  ["MarkImplementationStarted", "Plan was not changed"],
]);

// Only well-formed ids (isWellFormedId) from a request are logged, so an unauthenticated call costs at
// most one short log line (never its field contents).

/**
 * Wraps a handler: request id (from x-request-id or generated, echoed in response metadata), request
 * decoding (wire check first: MALFORMED_REQUEST, INVALID_UTF8), caller, one structured log line per
 * call (never plan content, ids only when well-formed), and error mapping. Handlers only translate;
 * they never choose a status code.
 */
export function unary<Req extends object, Res>(
  method: string,
  deps: UnaryDeps,
  handler: (request: Req, context: CallContext) => Promise<Res>,
): handleUnaryCall<ReceivedRequest<Req>, Res> {
  return (call, callback) => {
    const requestId = requestIdOf(call.metadata);
    const started = performance.now();
    const log: { method: string; requestId: string; taskId?: string } = { method, requestId };
    const deadline = Number(call.getDeadline()); // Infinity when the client set none
    Promise.resolve()
      .then(() => {
        const request = call.request.decode();
        const taskId = "taskId" in request ? request.taskId : undefined;
        if (typeof taskId === "string" && isWellFormedId(taskId)) log.taskId = taskId;
        return deps.authenticate(call.metadata).then(async (caller) => {
          const notDone = WRITE_METHODS.get(method);
          if (notDone) await admitWrite(deps.writeRateLimit, caller, call.getPeer(), notDone);
          return handler(request, { caller, requestId, deadline });
        });
      })
      .then(
        (response) => {
          const ms = performance.now() - started;
          deps.metrics.rpc(method, "OK", ms / 1000);
          const entry = { ...log, code: "OK", ms: Math.round(ms) };
          if (ms > deps.slowCallMs) deps.logger.warn(entry, "slow rpc");
          else deps.logger.info(entry, "rpc");
          echo(call, requestId);
          callback(null, response);
        },
        (error: unknown) => {
          const wire = toWireError(error, requestId);
          const ms = performance.now() - started;
          deps.metrics.rpc(method, status[wire.code], ms / 1000);
          deps.metrics.rejection(wire.reason);
          const entry = { ...log, code: status[wire.code], reason: wire.reason, ms: Math.round(ms) };
          if (wire.internal) deps.logger.error({ ...entry, err: error }, "rpc failed unexpectedly");
          else if (wire.corrupt) deps.logger.error({ ...entry, ...wire.corrupt }, CORRUPT_CONTENT);
          else if (ms > deps.slowCallMs) deps.logger.warn(entry, "slow rpc");
          else deps.logger.info(entry, "rpc rejected");
          echo(call, requestId);
          callback({ code: wire.code, details: wire.details, metadata: wire.metadata });
        },
      );
  };
}

type CallWithMetadata = { readonly metadata: Metadata; sendMetadata(metadata: Metadata): void };

/** The call's request id: x-request-id when well-formed, else a new one. */
function requestIdOf(metadata: Metadata): string {
  const given = metadata.get("x-request-id")[0];
  return typeof given === "string" && isWellFormedId(given) ? given : randomUUID();
}

// The response headers echo the request id. A unary call sends them with its answer: headers sent
// at the start would be a frame of their own, and one more wake-up of the client, on every call.
function echo(call: CallWithMetadata, requestId: string): void {
  const echoed = new Metadata();
  echoed.set("x-request-id", requestId);
  call.sendMetadata(echoed);
}

/** The call's request id, echoed in response metadata at once (streams: the client sees it early). */
export function echoRequestId(call: CallWithMetadata): string {
  const requestId = requestIdOf(call.metadata);
  echo(call, requestId);
  return requestId;
}

// The caller a write counts against: the token subject with auth on; otherwise the client's address
// (request fields such as the author are the caller's to choose, so they cannot key a limit). With
// auth off the limit is on only when PLAN_RATE_LIMIT_WRITES is set (config.ts).
async function admitWrite(
  limit: WriteRateLimit,
  caller: Caller,
  peer: string,
  notDone: string,
): Promise<void> {
  const key = caller.authenticated && caller.subject ? `subject:${caller.subject}` : `peer:${peerHost(peer)}`;
  const waitMs = await limit.admit(key);
  if (waitMs !== null) throw planErrors.rateLimited(limit.writes, limit.windowMs, waitMs).asNotDone(notDone);
}

function peerHost(peer: string): string {
  return peer.replace(/^ipv[46]:/, "").replace(/:\d+$/, "");
}
