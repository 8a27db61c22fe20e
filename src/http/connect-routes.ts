import {
  fromBinary,
  toBinary,
  type DescMethod,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type DescService,
  type Message,
} from "@bufbuild/protobuf";
import type {
  handleServerStreamingCall,
  handleUnaryCall,
  MethodDefinition,
  ServerUnaryCall,
  ServerWritableStream,
  UntypedHandleCall,
} from "@grpc/grpc-js";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { connectErrorOf, type GrpcFailure } from "./connect-error";
import { scopedCallOf } from "./grpc-call";
import { ResponseStream } from "./response-stream";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any generated method definition
type Definition = Record<string, MethodDefinition<any, any>>;
/** The gRPC port's handlers of one service (a generated service implementation). */
type Handlers = Record<string, UntypedHandleCall>;

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
  service: DescService,
  definition: Definition,
  handlers: Handlers,
): void {
  for (const method of service.methods) {
    const grpc = definition[method.localName];
    const handler = handlers[method.localName];
    if (!grpc || !handler)
      throw new Error(`${service.typeName}/${method.name} has no handler on the gRPC port`);
    const received = (request: Message) =>
      grpc.requestDeserialize(Buffer.from(toBinary(method.input, request)));
    const answer = (value: unknown) => fromBinary(method.output, grpc.responseSerialize(value) as Uint8Array);
    if (method.methodKind === "unary") {
      router.rpc(method as DescMethodUnary, (request: Message, context: HandlerContext) =>
        unaryCall(handler as handleUnaryCall<unknown, unknown>, received(request), context, answer),
      );
    } else if (method.methodKind === "server_streaming") {
      router.rpc(method as DescMethodServerStreaming, (request: Message, context: HandlerContext) =>
        streamCall(
          handler as handleServerStreamingCall<unknown, unknown>,
          received(request),
          context,
          method,
        ),
      );
    }
    // Client streams (ImportTask) stay on the gRPC port: gRPC-Web cannot carry them, and Connect
    // only over HTTP/2, which this listener does not speak; such a path answers 404 here.
  }
}

function unaryCall(
  handler: handleUnaryCall<unknown, unknown>,
  request: unknown,
  context: HandlerContext,
  answer: (value: unknown) => Message,
): Promise<Message> {
  const call = { ...scopedCallOf(context), request } as unknown as ServerUnaryCall<unknown, unknown>;
  return new Promise((resolve, reject) => {
    handler(call, (error, value) => {
      if (error) reject(connectErrorOf(error as GrpcFailure));
      else resolve(answer(value));
    });
  });
}

function streamCall(
  handler: handleServerStreamingCall<unknown, unknown>,
  request: unknown,
  context: HandlerContext,
  method: DescMethod,
): AsyncIterable<Message> {
  const stream = new ResponseStream(method.output, context.signal);
  const call = Object.assign(stream, scopedCallOf(context), { request });
  handler(call as unknown as ServerWritableStream<unknown, unknown>);
  return stream.messages();
}
