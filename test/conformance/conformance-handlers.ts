import {
  create,
  type DescMessage,
  type DescService,
  fromBinary,
  type Message,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import {
  Metadata,
  type MethodDefinition,
  type sendUnaryData,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedHandleCall,
} from "@grpc/grpc-js";
import { ConnectError } from "@connectrpc/connect";
import { es } from "@taskplans/contract";
import type { ReceivedRequest } from "../../src/grpc/wire/received-request";

// connectrpc.conformance.v1.ConformanceService as grpc-js handlers, the form the HTTP door's
// direct paths and router run (src/http/connect-routes.ts): each method answers as its response
// definition says (headers, data or an error, trailers, a delay) and echoes what it received
// (headers, timeout, the request). docs: the conformance suite's "Testing Servers".

/* eslint-disable @typescript-eslint/no-explicit-any -- the conformance messages are read from a
   descriptor set at run time (test/conformance/server.ts), so they have no generated types. */
type Dynamic = Message & Record<string, any>;
type Header = { name: string; value: string[] };

const PACKAGE = "connectrpc.conformance.v1";
const GRPC_INVALID_ARGUMENT = 3;

/** The methods the door serves of the conformance service, with their handlers and definitions. */
export interface ConformanceService {
  readonly service: DescService;
  readonly definition: Record<string, MethodDefinition<any, any>>;
  readonly handlers: Record<string, UntypedHandleCall>;
}

/**
 * The conformance service from its descriptors. Not served, as the suite asks: `Unimplemented`
 * (the framework answers it: here a 404, unimplemented), and `BidiStream` (bidirectional streams
 * need HTTP/2 for full duplex; the door speaks HTTP/1.1 and serves none; config.yaml leaves them out).
 */
export function conformanceService(registry: Registry): ConformanceService {
  const full = registry.getService(`${PACKAGE}.ConformanceService`);
  if (!full) throw new Error(`${PACKAGE}.ConformanceService is not in the descriptor set`);
  const service = {
    ...full,
    methods: full.methods.filter((m) => m.name !== "Unimplemented" && m.name !== "BidiStream"),
  } as DescService;
  const message = (name: string) => {
    const desc = registry.getMessage(`${PACKAGE}.${name}`);
    if (!desc) throw new Error(`${PACKAGE}.${name} is not in the descriptor set`);
    return desc;
  };
  const info = message("ConformancePayload.RequestInfo");
  const definition: ConformanceService["definition"] = {};
  for (const method of service.methods) {
    const binary = (desc: DescMessage) => ({
      serialize: (value: Message) => Buffer.from(toBinary(desc, value)),
      deserialize: (bytes: Buffer) => fromBinary(desc, bytes),
    });
    const input = binary(method.input);
    const output = binary(method.output);
    definition[method.localName] = {
      path: `/${full.typeName}/${method.name}`,
      requestStream: method.methodKind === "client_streaming",
      responseStream: method.methodKind === "server_streaming",
      requestSerialize: input.serialize,
      requestDeserialize: input.deserialize,
      responseSerialize: output.serialize,
      responseDeserialize: output.deserialize,
    };
  }
  const handlers: ConformanceService["handlers"] = {};
  for (const method of service.methods) {
    const io = { info, input: method.input, output: method.output };
    handlers[method.localName] =
      method.methodKind === "client_streaming"
        ? clientStreamHandler(io)
        : method.methodKind === "server_streaming"
          ? serverStreamHandler(io)
          : unaryHandler(io);
  }
  return { service, definition, handlers };
}

/** The descriptors a handler needs: RequestInfo, its method's request and its answer. */
interface Io {
  readonly info: DescMessage;
  readonly input: DescMessage;
  readonly output: DescMessage;
}

/** What a call received, as RequestInfo: its headers, its timeout, its requests (as Any). */
function requestInfo(
  { info, input }: Io,
  call: { metadata: Metadata; getDeadline(): Date | number },
  requests: Dynamic[],
): Dynamic {
  const requestHeaders: Header[] = Object.keys(call.metadata.getMap()).map((name) => ({
    name,
    value: call.metadata.get(name).map((value) => String(value)),
  }));
  const deadline = Number(call.getDeadline());
  return create(info, {
    requestHeaders,
    timeoutMs: Number.isFinite(deadline) ? BigInt(Math.max(0, Math.round(deadline - Date.now()))) : undefined,
    requests: requests.map((request) => anyPack(input, request)),
  }) as Dynamic;
}

/** grpc-js metadata of the suite's headers. */
function metadataOf(headers: readonly Header[] | undefined): Metadata {
  const metadata = new Metadata();
  for (const header of headers ?? []) for (const value of header.value) metadata.add(header.name, value);
  return metadata;
}

/**
 * The suite's Error as a grpc-js failure: its code and message, its details and the RequestInfo
 * (when the suite wants it echoed) in grpc-status-details-bin, and the trailers beside them.
 */
function failureOf(error: Dynamic, echoed: Dynamic | null, info: DescMessage, trailers: Metadata) {
  const details = [...(error.details as Message[]), ...(echoed ? [anyPack(info, echoed)] : [])];
  const status = create(es.StatusSchema, {
    code: error.code as number,
    message: error.message ?? "",
    details,
  } as never);
  const metadata = trailers.clone();
  metadata.set("grpc-status-details-bin", Buffer.from(toBinary(es.StatusSchema, status)));
  return { code: error.code as number, details: (error.message as string | undefined) ?? "", metadata };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A request the handler could not read as the failure it answers: the protocol's own refusal as it
 * came (a message over the limit while a client stream is read), or one that does not decode.
 */
const refusal = (thrown: unknown) =>
  thrown instanceof ConnectError
    ? { code: thrown.code, details: thrown.rawMessage }
    : { code: GRPC_INVALID_ARGUMENT, details: thrown instanceof Error ? thrown.message : String(thrown) };

/** Answers a unary-shaped call (Unary, IdempotentUnary, ClientStream) from its response definition. */
async function answerUnary(
  call: { metadata: Metadata; getDeadline(): Date | number; sendMetadata(metadata: Metadata): void },
  requests: Dynamic[],
  io: Io,
  callback: sendUnaryData<unknown>,
): Promise<void> {
  const { info, output } = io;
  const definition = requests[0]?.responseDefinition as Dynamic | undefined;
  const echoed = requestInfo(io, call, requests);
  const trailers = metadataOf(definition?.responseTrailers);
  if (definition) call.sendMetadata(metadataOf(definition.responseHeaders));
  if (definition?.responseDelayMs) await sleep(definition.responseDelayMs);
  const response = definition?.response as { case?: string; value?: unknown } | undefined;
  if (response?.case === "error")
    return callback(failureOf(response.value as Dynamic, echoed, info, trailers));
  const data = response?.case === "responseData" ? (response.value as Uint8Array) : new Uint8Array();
  callback(null, create(output, { payload: { data, requestInfo: echoed } } as never), trailers);
}

function unaryHandler(io: Io) {
  return (call: ServerUnaryCall<ReceivedRequest<unknown>, unknown>, callback: sendUnaryData<unknown>) => {
    let request: Dynamic;
    try {
      request = call.request.decode() as Dynamic;
    } catch (thrown) {
      return callback(refusal(thrown));
    }
    void answerUnary(call, [request], io, callback);
  };
}

function clientStreamHandler(io: Io) {
  return (
    call: ServerReadableStream<ReceivedRequest<unknown>, unknown>,
    callback: sendUnaryData<unknown>,
  ) => {
    void (async () => {
      const requests: Dynamic[] = [];
      try {
        for await (const request of call as AsyncIterable<ReceivedRequest<unknown>>)
          requests.push(request.decode() as Dynamic);
      } catch (thrown) {
        return callback(refusal(thrown));
      }
      await answerUnary(call, requests, io, callback);
    })();
  };
}

function serverStreamHandler(io: Io) {
  const { info, output } = io;
  return (call: ServerWritableStream<ReceivedRequest<unknown>, unknown>) => {
    let request: Dynamic;
    try {
      request = call.request.decode() as Dynamic;
    } catch (thrown) {
      call.emit("error", refusal(thrown));
      return;
    }
    const definition = request.responseDefinition as Dynamic | undefined;
    const echoed = requestInfo(io, call, [request]);
    const trailers = metadataOf(definition?.responseTrailers);
    // The headers go before any delay (the direct path sends them when the handler has the call).
    if (definition) call.sendMetadata(metadataOf(definition.responseHeaders));
    let cancelled = false;
    call.once("cancelled", () => (cancelled = true));
    void (async () => {
      let sent = 0;
      for (const data of (definition?.responseData as Uint8Array[] | undefined) ?? []) {
        if (definition?.responseDelayMs) await sleep(definition.responseDelayMs);
        if (cancelled) return;
        const message = create(output, {
          payload: { data, requestInfo: sent === 0 ? echoed : undefined },
        } as never);
        call.write(Buffer.from(toBinary(output, message)));
        sent++;
      }
      if (definition?.error)
        call.emit("error", failureOf(definition.error, sent === 0 ? echoed : null, info, trailers));
      else call.end(trailers);
    })();
  };
}
