import type { handleUnaryCall } from "@grpc/grpc-js";
import type { Caller } from "../auth/caller";
import { type CallDeps, CallScope } from "./call-scope";
import type { ReceivedRequest } from "./received-request";

/** Per-call facts a handler receives. */
export interface CallContext {
  readonly caller: Caller;
  readonly requestId: string;
  /** The client's deadline (epoch ms); Infinity when it set none. Writes bound their lock wait by it. */
  readonly deadline: number;
  /** A plan write reports here, once committed, the bytes of plan text it stored (the write budget). */
  readonly stored: (bytes: number) => void;
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
        const { requestId, deadline } = scope;
        return handler(request, { caller, requestId, deadline, stored: (bytes) => scope.stored(bytes) });
      })
      .then(
        (response) => {
          scope.succeeded();
          callback(null, response);
        },
        (error: unknown) => {
          const wire = scope.failed(error);
          callback({ code: wire.code, details: wire.details, metadata: wire.metadata });
        },
      );
  };
}
