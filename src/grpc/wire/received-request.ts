import type { DescService } from "@bufbuild/protobuf";
import type {
  handleClientStreamingCall,
  handleServerStreamingCall,
  handleUnaryCall,
  MethodDefinition,
} from "@grpc/grpc-js";
import { RequestError } from "./request-error";
import { checkWire } from "./wire-check";

/**
 * A request as received: its bytes, decoded only when the handler asks (inside the call's error
 * handling), so that a malformed request gets a rich error, a request id and a log line instead of
 * grpc-js's bare INTERNAL "Error deserializing request".
 */
export class ReceivedRequest<Req> {
  constructor(
    readonly bytes: Buffer,
    private readonly decoder: (bytes: Buffer) => Req,
  ) {}

  /** The checked, decoded message; throws RequestError. */
  decode(): Req {
    return this.decoder(this.bytes);
  }
}

/** A generated service implementation whose handlers take ReceivedRequest instead of messages. */
export type RawServer<Server> = {
  [K in keyof Server]: Server[K] extends handleUnaryCall<infer Req, infer Res>
    ? handleUnaryCall<ReceivedRequest<Req>, Res>
    : Server[K] extends handleServerStreamingCall<infer Req, infer Res>
      ? handleServerStreamingCall<ReceivedRequest<Req>, Res | Buffer>
      : Server[K] extends handleClientStreamingCall<infer Req, infer Res>
        ? handleClientStreamingCall<ReceivedRequest<Req>, Res>
        : Server[K];
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any generated method definition
type Definition = Record<string, MethodDefinition<any, any>>;

/**
 * The generated service definition with each method's request deserializer replaced: it never
 * throws, it wraps the bytes in a ReceivedRequest whose decode() first checks them against the
 * method's input descriptor (checkWire), then decodes them with the generated decoder. Responses
 * may also be given already encoded (a Buffer), which is sent as it is.
 */
export function receivingRaw(definition: Definition, schema: DescService): Definition {
  const methods: Definition = {};
  for (const [key, method] of Object.entries(definition)) {
    const name = method.path.slice(method.path.lastIndexOf("/") + 1);
    const input = schema.methods.find((m) => m.name === name)?.input;
    if (!input) throw new Error(`${method.path} is not in the ${schema.typeName} descriptor`);
    const decoder = (bytes: Buffer) => {
      checkWire(input, bytes);
      try {
        return method.requestDeserialize(bytes);
      } catch {
        throw new RequestError("MALFORMED_REQUEST", null, `the request is not a valid ${input.typeName}`);
      }
    };
    methods[key] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => new ReceivedRequest(bytes, decoder),
      // A handler may send a message it encoded already (a WatchPlan change sent to many streams).
      responseSerialize: (value: unknown) =>
        Buffer.isBuffer(value) ? value : method.responseSerialize(value),
    };
  }
  return methods;
}
