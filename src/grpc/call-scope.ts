import { randomUUID } from "node:crypto";
import { Metadata, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Caller } from "../auth/caller";
import type { CallProtocol, PlanMetrics } from "../observability/metrics";
import { planErrors } from "../plans/errors";
import { isWellFormedId } from "../plans/rules/validate";
import { CORRUPT_CONTENT, toWireError, type WireError } from "./error-mapping";
import type { ReceivedRequest } from "./wire/received-request";
import type { ExpensiveCalls, ExpensiveSlot } from "./limits/expensive-calls";
import type { WriteBudget } from "./limits/write-budget";
import type { WriteRateLimit } from "./limits/write-rate-limit";
import type { CallSpan, Tracing } from "../observability/tracing";
import { PlanServiceService, RPC_KINDS, type RpcKindOf } from "@taskplans/contract";
import { TaskServiceService } from "@taskplans/contract";

// The full service name of each method (rpc.service), from the generated definitions' paths.
const SERVICE_OF: ReadonlyMap<string, string> = new Map(
  [...Object.values(PlanServiceService), ...Object.values(TaskServiceService)].map((definition) => {
    const [, service = "", method = ""] = definition.path.split("/");
    return [method, service];
  }),
);

/** Resolves the caller from call metadata (throws AuthenticationError when auth is on and fails). */
export type Authenticate = (metadata: Metadata) => Promise<Caller>;

/** What every call's scope needs, unary or stream. */
export interface CallDeps {
  /** Null: tracing off (nothing runs for it). */
  readonly tracing: Tracing | null;
  readonly authenticate: Authenticate;
  readonly logger: Logger;
  readonly metrics: PlanMetrics;
  /** Calls slower than this are logged at warn level. */
  readonly slowCallMs: number;
  /** Per-caller limit of write calls (RESOURCE_EXHAUSTED RATE_LIMITED with RetryInfo). */
  readonly writeRateLimit: WriteRateLimit;
  /** Per-caller budget of stored bytes (RESOURCE_EXHAUSTED WRITE_BUDGET_EXCEEDED with RetryInfo). */
  readonly writeBudget: WriteBudget;
  /** Concurrency limit of expensive calls, per caller and per replica (RESOURCE_EXHAUSTED EXPENSIVE_CALLS_LIMITED with RetryInfo). */
  readonly expensiveCalls: ExpensiveCalls;
}

/**
 * The methods that write: each counts against the caller's write rate limit, and each refusal of
 * one (by the limit, a rule or a failure) says first what did not happen (CreateTask and DeleteTask
 * are not plan writes). From the proto's rpc_kind option (generated/rpc-kinds.ts), as the two
 * tables below.
 */
export const WRITE_METHODS: ReadonlyMap<string, string> = new Map(
  Object.entries(RPC_KINDS)
    .filter(([, kind]) => kind.rateLimited)
    .map(([method, kind]) => [method, kind.refusal]),
);

/**
 * The writes that can store plan text, held to the caller's write budget before they run. The
 * others are not refused by it (DeletePlan and DeleteTask are how a caller recovers; CreateTask
 * stores no plan text; the implementation-started mark is set once per plan), though what a
 * DeletePlan or a mark stores (its change row's copy of the plan) is charged.
 */
const BUDGETED_METHODS: ReadonlySet<string> = methodsWhere((kind) => kind.budgeted);

/**
 * The reads whose cost grows with the plans they compare (a diff of two revisions of up to 256 KiB
 * each): held to the expensive-call limit (limits/expensive-calls.ts), as are the writes that ask to merge.
 */
const EXPENSIVE_READS: ReadonlySet<string> = methodsWhere((kind) => kind.expensive);

function methodsWhere(pick: (kind: RpcKindOf) => boolean): ReadonlySet<string> {
  return new Set(Object.keys(RPC_KINDS).filter((method) => pick(RPC_KINDS[method] as RpcKindOf)));
}

/**
 * The call as the scope sees it, whatever its door: grpc-js unary and server-stream calls are one as
 * they are; the HTTP listener (src/http/grpc-call.ts) presents a Connect or gRPC-Web call the same
 * way, its headers as metadata, its timeout header as the deadline, its response headers for what
 * sendMetadata sends. `protocol` is absent on grpc-js calls (the gRPC port).
 */
export interface ScopedCall {
  readonly metadata: Metadata;
  readonly protocol?: CallProtocol;
  getPeer(): string;
  getDeadline(): Date | number;
  sendMetadata(metadata: Metadata): void;
}

const WORDS = {
  unary: { ok: "rpc", rejected: "rpc rejected", failed: "rpc failed unexpectedly" },
  stream: { ok: "stream ended by client", rejected: "stream ended", failed: "stream failed unexpectedly" },
};

/**
 * One call at the edge, unary or stream, from arrival to its end: the request id (x-request-id
 * when well-formed, else a new one; echoed in response metadata), the request decoded once (wire
 * check first: MALFORMED_REQUEST, INVALID_UTF8), the caller (and a write's admission by the rate
 * limit and the write budget, and the charge of what it stored; an expensive call's slot of the
 * expensive-call limit, held until the call ends), the client's deadline, and at the end one log line and one metric (never plan content;
 * ids only when well-formed) with the error as the wire carries it. Handlers only translate; they
 * never choose a status code. This is the one place a call's cross-cutting concerns hook in.
 */
export class CallScope {
  readonly requestId: string;
  /** The client's deadline (epoch ms); Infinity when it set none. */
  readonly deadline: number;
  private readonly started = performance.now();
  private readonly log: {
    method: string;
    requestId: string;
    protocol?: CallProtocol;
    taskId?: string;
    trace_id?: string;
    span_id?: string;
  };
  private readonly span: CallSpan | null;
  private readonly protocol: CallProtocol;
  /** The key a write counts against (its caller), once the write was admitted. */
  private writerKey: string | null = null;
  /** The expensive-call slot this call holds, released when it ends. */
  private slot: ExpensiveSlot | null = null;

  constructor(
    private readonly deps: CallDeps,
    private readonly method: string,
    private readonly call: ScopedCall,
    private readonly kind: "unary" | "stream",
  ) {
    const given = call.metadata.get("x-request-id")[0];
    this.requestId = typeof given === "string" && isWellFormedId(given) ? given : randomUUID();
    this.deadline = Number(call.getDeadline());
    this.protocol = call.protocol ?? "grpc";
    this.log = { method, requestId: this.requestId };
    if (this.protocol !== "grpc") this.log.protocol = this.protocol;
    this.span = deps.tracing?.startCall(SERVICE_OF.get(method) ?? "", method, call.metadata) ?? null;
    if (this.span) {
      this.log.trace_id = this.span.traceId;
      this.log.span_id = this.span.spanId;
      this.span.set("taskplans.request_id", this.requestId);
    }
    // A stream's client sees its request id at once; a unary call sends it with its answer (headers
    // sent at the start would be a frame of their own, one more wake-up of the client per call).
    if (kind === "stream") this.echo();
  }

  /** Runs the call's work in its trace (when tracing is on), so its inner spans are the call's children. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return this.span ? this.span.run(work) : work();
  }

  /** Decodes the request and resolves the caller; a write is admitted by the rate limit and the write budget first. */
  async open<Req extends object>(received: ReceivedRequest<Req>): Promise<{ request: Req; caller: Caller }> {
    const request = received.decode();
    const taskId = "taskId" in request ? request.taskId : undefined;
    if (typeof taskId === "string" && isWellFormedId(taskId)) {
      this.log.taskId = taskId;
      this.span?.set("taskplans.task_id", taskId);
    }
    const caller = await this.deps.authenticate(this.call.metadata);
    if (WRITE_METHODS.has(this.method)) await this.admitWrite(caller);
    if (EXPENSIVE_READS.has(this.method) || ("merge" in request && request.merge === true))
      this.slot = this.deps.expensiveCalls.admit(this.callerKey(caller));
    return { request, caller };
  }

  /** A committed write stored `bytes` of plan text: they count against its caller's write budget. */
  stored(bytes: number): void {
    if (this.writerKey !== null) this.deps.writeBudget.charge(this.writerKey, bytes);
  }

  /** A stream is open (its one log line at the start). */
  streaming(): void {
    this.deps.logger.info(this.log, "stream started");
  }

  /** The call ended well: a unary call answered OK, or a stream's client cancelled it. */
  succeeded(): void {
    this.slot?.release();
    const ms = performance.now() - this.started;
    const code = this.kind === "unary" ? "OK" : "CANCELLED";
    this.deps.metrics.rpc(this.method, code, ms / 1000, this.protocol);
    const { logger } = this.deps;
    const slow = this.kind === "unary" && ms > this.deps.slowCallMs;
    // The line is built only when it is written (at level warn, most calls write none).
    if (slow || logger.isLevelEnabled("info")) {
      const entry = { ...this.log, code, ms: Math.round(ms) };
      if (slow) logger.warn(entry, "slow rpc");
      else logger.info(entry, WORDS[this.kind].ok);
    }
    if (this.kind === "unary") this.echo();
    this.span?.end(this.kind === "unary" ? status.OK : status.CANCELLED, code, null);
  }

  /** The call failed: counted and logged once; returns what to send. */
  failed(error: unknown): WireError {
    this.slot?.release();
    const wire = toWireError(error, this.requestId, WRITE_METHODS.get(this.method) ?? null);
    const ms = performance.now() - this.started;
    this.deps.metrics.rpc(this.method, status[wire.code], ms / 1000, this.protocol);
    this.deps.metrics.rejection(wire.reason);
    const entry = { ...this.log, code: status[wire.code], reason: wire.reason, ms: Math.round(ms) };
    const { logger } = this.deps;
    if (wire.internal) logger.error({ ...entry, err: error }, WORDS[this.kind].failed);
    else if (wire.corrupt) logger.error({ ...entry, ...wire.corrupt }, CORRUPT_CONTENT);
    else if (this.kind === "unary" && ms > this.deps.slowCallMs) logger.warn(entry, "slow rpc");
    else logger.info(entry, WORDS[this.kind].rejected);
    if (this.kind === "unary") this.echo();
    this.span?.end(wire.code, status[wire.code], wire.reason);
    return wire;
  }

  private echo(): void {
    const echoed = new Metadata();
    echoed.set("x-request-id", this.requestId);
    this.call.sendMetadata(echoed);
  }

  // The caller a write counts against: the token subject with auth on; otherwise the client's
  // address (request fields such as the author are the caller's to choose, so they cannot key a
  // limit). With auth off the limits are on only when PLAN_RATE_LIMIT_WRITES or
  // PLAN_WRITE_BUDGET_BYTES is set (config.ts). The rate limit counts first: a refused call is
  // counted by it, and a write refused by the budget still counts as a call.
  private async admitWrite(caller: Caller): Promise<void> {
    const limit = this.deps.writeRateLimit;
    const key = this.callerKey(caller);
    const waitMs = await limit.admit(key);
    if (waitMs !== null) throw planErrors.rateLimited(limit.writes, limit.windowMs, waitMs);
    if (BUDGETED_METHODS.has(this.method)) this.deps.writeBudget.admit(key);
    this.writerKey = key;
  }

  // The key a caller's limits count against (see admitWrite).
  private callerKey(caller: Caller): string {
    const peer = this.call
      .getPeer()
      .replace(/^ipv[46]:/, "")
      .replace(/:\d+$/, "");
    return caller.authenticated && caller.subject ? `subject:${caller.subject}` : `peer:${peer}`;
  }
}
