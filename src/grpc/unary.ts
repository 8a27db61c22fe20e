import type { handleUnaryCall, sendUnaryData } from "@grpc/grpc-js";
import type { Caller } from "../auth/caller";
import { type CallDeps, CallScope } from "./call-scope";
import type { ReceivedRequest } from "./wire/received-request";

/** Per-call facts a handler receives. */
export interface CallContext {
  readonly caller: Caller;
  readonly requestId: string;
  /**
   * What a write passes to its use case: the client's deadline (epoch ms; Infinity when it set none),
   * which bounds the lock wait, and where a plan write reports, once committed, the bytes of plan
   * text it stored (the write budget).
   */
  readonly write: { readonly deadline: number; readonly stored: (bytes: number) => void };
}

/** What every handler wrapper needs (the call scope's dependencies). */
export type UnaryDeps = CallDeps;

/** Wraps a unary handler in its call's scope (call-scope.ts): the handler only translates. */
export function unary<Req extends object, Res>(
  method: string,
  deps: UnaryDeps,
  handler: (request: Req, context: CallContext) => Promise<Res>,
): handleUnaryCall<ReceivedRequest<Req>, Res> {
  return (call, callback) => {
    const scope = new CallScope(deps, method, call, "unary");
    scope
      .run(async () => {
        const { request, caller } = await scope.open(call.request);
        const write = { deadline: scope.deadline, stored: (bytes: number) => scope.stored(bytes) };
        return handler(request, { caller, requestId: scope.requestId, write });
      })
      .then(...answerThrough(scope, callback));
  };
}

/**
 * How a call that answers once (unary, or a client stream) ends: its scope records the outcome and
 * the answer or the wire error goes to grpc-js's callback.
 */
export function answerThrough<Res>(
  scope: CallScope,
  callback: sendUnaryData<Res>,
): [(response: Res) => void, (error: unknown) => void] {
  return [
    (response) => {
      scope.succeeded();
      callback(null, response);
    },
    (error) => {
      const wire = scope.failed(error);
      callback({ code: wire.code, details: wire.details, metadata: wire.metadata });
    },
  ];
}
