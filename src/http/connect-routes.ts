import {
  fromBinary,
  toBinary,
  type DescMethodClientStreaming,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type DescService,
  type Message,
} from "@bufbuild/protobuf";
import type { EventEmitter } from "node:events";
import type {
  Metadata,
  handleClientStreamingCall,
  handleServerStreamingCall,
  handleUnaryCall,
  MethodDefinition,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  UntypedHandleCall,
} from "@grpc/grpc-js";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import type { ReceivedRequest } from "../grpc/wire/received-request";
import type { Receiving } from "./direct-request";
import { connectErrorOf, type GrpcFailure } from "./connect-error";
import { type HttpScopedCall, scopedCallOf } from "./grpc-call";
import { ResponseStream } from "./response-stream";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any generated method definition
type Definition = Record<string, MethodDefinition<any, any>>;
/** The gRPC port's handlers of one service (a generated service implementation). */
type Handlers = Record<string, UntypedHandleCall>;

/** One service of the gRPC port, as the HTTP listener serves it. */
export interface DoorService {
  readonly service: DescService;
  /** The port's definition (from receivingRaw). */
  readonly definition: Definition;
  readonly handlers: Handlers;
}

/**
 * A unary method as the direct path (connect-unary.ts) calls it: the request as the gRPC port
 * received it (direct-request.ts), the call as the call scope sees it, the answer to serialize.
 */
export interface UnaryEndpoint extends Receiving {
  readonly method: DescMethodUnary;
  call(request: ReceivedRequest<unknown>, scoped: HttpScopedCall): Promise<Message>;
}

/**
 * The server side of a grpc-js server-stream call as a handler uses it: `write` (with a callback
 * once the message is taken), an "error" event to end the call with a failure, `end()` to end it
 * with success (and its trailers; WatchPlan never does), and a "cancelled" event it emits when the
 * client goes away.
 */
export type StreamCall = HttpScopedCall &
  EventEmitter & { write(bytes: Uint8Array, written?: () => void): boolean; end(trailer?: Metadata): void };

/**
 * A server-streaming method as the direct path (connect-stream.ts) opens it: the request as the
 * gRPC port received it, run by the port's handler on `call`. Each message the handler writes is the
 * protobuf encoding of the method's output (one Buffer per change, shared by every stream of a task).
 */
export interface StreamEndpoint extends Receiving {
  readonly method: DescMethodServerStreaming;
  open(request: ReceivedRequest<unknown>, call: StreamCall): void;
}

/** A service's methods as the direct paths serve them. */
export interface DirectEndpoints {
  readonly unary: UnaryEndpoint[];
  readonly streams: StreamEndpoint[];
}

/**
 * One service of the gRPC port served by a Connect router (Connect, gRPC-Web): every method runs
 * the very handler the gRPC port runs, with its call scope (call-scope.ts), on the very bytes the
 * gRPC port would receive. Connect decodes the request (JSON or binary, the proto3 JSON mapping) into
 * a protobuf-es message, which is encoded to the protobuf wire format and handed over like a gRPC
 * request (`definition` is the port's, from receivingRaw: its deserializer wraps the bytes in a
 * ReceivedRequest, checked and decoded inside the call's scope); the answer, encoded by the port's
 * serializer, is decoded into the protobuf-es message Connect sends. Only the framing differs.
 */
export function serveOverConnect(
  router: ConnectRouter,
  { service, definition, handlers }: DoorService,
): DirectEndpoints {
  const endpoints: DirectEndpoints = { unary: [], streams: [] };
  for (const method of service.methods) {
    const grpc = definition[method.localName];
    const handler = handlers[method.localName];
    if (!grpc || !handler)
      throw new Error(`${service.typeName}/${method.name} has no handler on the gRPC port`);
    const receive = (bytes: Uint8Array) =>
      grpc.requestDeserialize(
        Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      ) as ReceivedRequest<unknown>;
    const received = (request: Message) => receive(toBinary(method.input, request));
    const answer = (value: unknown) => fromBinary(method.output, grpc.responseSerialize(value) as Uint8Array);
    if (method.methodKind === "unary") {
      const unary = method as DescMethodUnary;
      const call = (request: ReceivedRequest<unknown>, scoped: HttpScopedCall) =>
        unaryCall(handler as handleUnaryCall<unknown, unknown>, request, scoped, answer);
      router.rpc(unary, (request: Message, context: HandlerContext) =>
        call(received(request), scopedCallOf(context)),
      );
      endpoints.unary.push({ method: unary, input: method.input, receive, call });
    } else if (method.methodKind === "server_streaming") {
      const streaming = method as DescMethodServerStreaming;
      const open = (request: ReceivedRequest<unknown>, call: StreamCall) =>
        (handler as handleServerStreamingCall<unknown, unknown>)(
          Object.assign(call, { request }) as unknown as ServerWritableStream<unknown, unknown>,
        );
      router.rpc(streaming, (request: Message, context: HandlerContext) => {
        const scoped = scopedCallOf(context);
        const stream = new ResponseStream(method.output, context.signal, scoped.sendTrailer);
        open(received(request), Object.assign(stream, scoped));
        return stream.messages();
      });
      endpoints.streams.push({ method: streaming, input: method.input, receive, open });
    } else if (method.methodKind === "client_streaming") {
      router.rpc(
        method as DescMethodClientStreaming,
        (requests: AsyncIterable<Message>, context: HandlerContext) =>
          clientStreamCall(
            handler as handleClientStreamingCall<unknown, unknown>,
            receivedEach(requests, received),
            context,
            answer,
          ),
      );
    } else {
      throw new Error(`${service.typeName}/${method.name}: bidirectional streams are not served over HTTP`);
    }
  }
  return endpoints;
}

function unaryCall(
  handler: handleUnaryCall<unknown, unknown>,
  request: unknown,
  scoped: HttpScopedCall,
  answer: (value: unknown) => Message,
): Promise<Message> {
  // The scoped call is this call's own (grpc-call.ts builds one per call): it becomes the grpc-js call.
  const call = Object.assign(scoped, { request }) as unknown as ServerUnaryCall<unknown, unknown>;
  return new Promise((resolve, reject) => {
    handler(call, (error, value, trailer) => settle(scoped, error, value, trailer, answer, resolve, reject));
  });
}

/**
 * A grpc-js handler's answer as Connect's: its trailers (of the callback, or of the error, as grpc-js
 * sends them) sent as the protocol's trailers, then the answer or the error.
 */
function settle(
  scoped: HttpScopedCall,
  error: unknown,
  value: unknown,
  trailer: Metadata | undefined,
  answer: (value: unknown) => Message,
  resolve: (message: Message) => void,
  reject: (error: unknown) => void,
): void {
  const failure = error as GrpcFailure | null;
  scoped.sendTrailer(failure ? failure.metadata : trailer);
  if (failure) reject(connectErrorOf(failure));
  else resolve(answer(value));
}

/** Each message of a client stream handed over as the gRPC port's deserializer would (see above). */
async function* receivedEach(
  requests: AsyncIterable<Message>,
  received: (request: Message) => unknown,
): AsyncGenerator<unknown> {
  for await (const request of requests) yield received(request);
}

/**
 * A client stream (ImportTask): the handler reads the grpc-js call as an async iterable of received
 * requests and answers once through its callback, as on the gRPC port.
 */
function clientStreamCall(
  handler: handleClientStreamingCall<unknown, unknown>,
  requests: AsyncIterable<unknown>,
  context: HandlerContext,
  answer: (value: unknown) => Message,
): Promise<Message> {
  const scoped = scopedCallOf(context);
  const call = { ...scoped, [Symbol.asyncIterator]: () => requests[Symbol.asyncIterator]() };
  return new Promise((resolve, reject) => {
    handler(call as unknown as ServerReadableStream<unknown, unknown>, (error, value, trailer) =>
      settle(scoped, error, value, trailer, answer, resolve, reject),
    );
  });
}
