import { create, fromBinary, toBinary, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Metadata } from "@grpc/grpc-js";
import { type Client, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as contract from "@taskplans/contract";
import type { Clients, PlanApi, TaskApi } from "./rpc";

/** The protocol a test app's clients speak: gRPC (the client package), or Connect JSON over the HTTP listener. */
export type Transport = "grpc" | "connect";

// A ts-proto message's functions (generated/ts), found by the message's name.
interface TsProto {
  fromPartial(value: unknown): unknown;
  encode(message: unknown): { finish(): Uint8Array };
  decode(bytes: Uint8Array): unknown;
}
const tsProto = (name: string) => (contract as unknown as Record<string, TsProto>)[name] as TsProto;

/**
 * The same promise API as the client package's (PlanApi, TaskApi), over Connect with JSON bodies
 * (`@connectrpc/connect-node`, HTTP/1.1) against the HTTP listener: a test written against
 * `app.plans` runs unchanged over either door (the transport switch of test-app.ts). Requests and
 * answers are converted through the protobuf wire format between ts-proto's objects and
 * protobuf-es's; a ConnectError becomes the grpc-js error shape (code, details, and the
 * grpc-status-details-bin metadata rebuilt from the JSON body's details) that rpcError reads.
 */
export function connectOverHttp(port: number, token?: string, host = "127.0.0.1"): Clients {
  const bearer: Interceptor = (next) => (request) => {
    if (token) request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
  const transport = createConnectTransport({
    baseUrl: `http://${host}:${port}`,
    httpVersion: "1.1",
    useBinaryFormat: false,
    interceptors: [bearer],
  });
  const unsupported = () => {
    throw new Error("WatchPlan over Connect: use a Connect client's stream directly (http-door.test.ts)");
  };
  const plans = {
    ...promiseApi(contract.es.PlanService, createClient(contract.es.PlanService, transport)),
    watch: unsupported,
    watchPlan: unsupported,
  } as unknown as PlanApi;
  const tasks = promiseApi(
    contract.es.TaskService,
    createClient(contract.es.TaskService, transport),
  ) as unknown as TaskApi;
  return { plans, tasks, close: () => undefined };
}

function promiseApi(service: DescService, client: Client<DescService>): Record<string, unknown> {
  const api: Record<string, unknown> = {};
  for (const method of service.methods) {
    if (method.methodKind !== "unary") continue;
    const call = (
      client as unknown as Record<string, (request: unknown, options?: unknown) => Promise<unknown>>
    )[method.localName];
    if (!call) continue;
    api[method.localName] = async (request: unknown, options?: { timeoutMs?: number }) => {
      try {
        const response = await call.call(client, toEs(method, request), options);
        return tsProto(method.output.name).decode(toBinary(method.output, response as never));
      } catch (error) {
        throw grpcShaped(error);
      }
    };
  }
  return api;
}

function toEs(method: DescMethod, request: unknown) {
  const message = tsProto(method.input.name);
  return fromBinary(method.input, message.encode(message.fromPartial(request)).finish());
}

/** A ConnectError as grpc-js reports a failed call, with the rich details in grpc-status-details-bin. */
function grpcShaped(error: unknown): Error {
  if (!(error instanceof ConnectError)) return error as Error;
  const status = create(contract.es.StatusSchema, {
    code: error.code,
    message: error.rawMessage,
    details: error.details.flatMap((detail) =>
      "type" in detail ? [{ typeUrl: `type.googleapis.com/${detail.type}`, value: detail.value }] : [],
    ),
  });
  const metadata = new Metadata();
  metadata.set("grpc-status-details-bin", Buffer.from(toBinary(contract.es.StatusSchema, status)));
  return Object.assign(new Error(`${error.code} ${error.rawMessage}`), {
    code: error.code,
    details: error.rawMessage,
    metadata,
    json: error,
  });
}
